//! The buffers behind a [`SparseRows`](crate::vector::SparseRows) matrix: a vector of its own, or memory
//! another owner keeps alive (a caller's array read in place, as the Python bindings do with numpy's), shared
//! without a copy and copied only when the matrix is changed.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Elements kept alive by another owner and read in place. An implementation promises that
/// [`SharedSlice::as_slice`] returns the same elements for as long as it lives: nobody writes them meanwhile.
pub trait SharedSlice<T>: Send + Sync + std::panic::RefUnwindSafe {
    /// The elements.
    fn as_slice(&self) -> &[T];
}

impl<T: Send + Sync + std::panic::RefUnwindSafe> SharedSlice<T> for Vec<T> {
    fn as_slice(&self) -> &[T] {
        self
    }
}

/// A buffer of elements: owned, or shared with another owner (cloned by reference, copied on the first
/// change). Serialized as the sequence of its elements, exactly as a `Vec<T>` is; always read back owned.
pub(crate) enum Buffer<T: 'static> {
    Owned(Vec<T>),
    Shared(Arc<dyn SharedSlice<T>>),
}

impl<T: Clone> Buffer<T> {
    /// The elements as a vector of the buffer's own, copied once if they were shared.
    pub(crate) fn to_mut(&mut self) -> &mut Vec<T> {
        if let Buffer::Shared(s) = self {
            *self = Buffer::Owned(s.as_slice().to_vec());
        }
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(_) => unreachable!("made owned above"),
        }
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(s) => s.as_slice(),
        }
    }
}

impl<T: Clone> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        match self {
            Buffer::Owned(v) => Buffer::Owned(v.clone()),
            Buffer::Shared(s) => Buffer::Shared(Arc::clone(s)),
        }
    }
}

impl<T: PartialEq> PartialEq for Buffer<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: fmt::Debug> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: Serialize> Serialize for Buffer<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Buffer<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::deserialize(d).map(Buffer::Owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_buffer_is_copied_on_its_first_change_and_serializes_as_a_vector() {
        let shared: Arc<dyn SharedSlice<u32>> = Arc::new(vec![1, 2, 3]);
        let mut b = Buffer::Shared(Arc::clone(&shared));
        let c = b.clone();
        assert_eq!(Arc::strong_count(&shared), 3);
        b.to_mut().push(4);
        assert_eq!((&*b, &*c), (&[1, 2, 3, 4][..], &[1, 2, 3][..]));
        assert_eq!(shared.as_slice(), &[1, 2, 3]);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, serde_json::to_string(&vec![1, 2, 3]).unwrap());
        let back: Buffer<u32> = serde_json::from_str(&json).unwrap();
        assert!(matches!(back, Buffer::Owned(_)) && back == c);
    }
}
