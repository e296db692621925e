"""Type stubs of the extension module ``maxmargin._core`` (the Rust layer under ``maxmargin.sklearn``)."""

from typing import Any, Optional, Sequence, Tuple, TypedDict

import numpy as np
import numpy.typing as npt

__version__: str

# A CSR matrix as the extension reads it: ``(indptr, indices, data, n_features)``.
Csr = Tuple[
    npt.NDArray[np.int32 | np.int64], npt.NDArray[np.int32 | np.int64], npt.NDArray[np.float64], int
]

# A structural learner's settings, every key given (``maxmargin.learners._Learner._learning``).
class Learning(TypedDict):
    solver: str
    c: Optional[float]
    max_iter: Optional[float]
    tol: Optional[float]
    gap: Optional[float]
    random_state: int
    n_jobs: Optional[int]
    verbose: int
    rescaling: str
    blocks: int

def fit_linear(
    x: Csr,
    y: npt.NDArray[np.float64],
    sample_weight: Optional[npt.NDArray[np.float64]] = None,
    *,
    c: float = 1.0,
    loss: str = "hinge",
    multi_class: str = "auto",
    solver: str = "dcd",
    tol: Optional[float] = None,
    gap: Optional[float] = None,
    max_iter: Optional[float] = None,
    class_weight: Sequence[Tuple[float, float]] = ...,
    fit_intercept: bool = True,
    random_state: int = 0,
    scale: str = "none",
    classes: Optional[Sequence[float]] = None,
) -> Tuple[Optional["Model"], dict[str, Any]]: ...

class Model:
    @property
    def n_support(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def is_kernel(self) -> bool: ...
    def parts(self) -> dict[str, Any]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "Model": ...
    def decision(
        self,
        x: Csr,
    ) -> npt.NDArray[np.float64]: ...
    def calibrated(
        self,
        x: Csr,
        y: npt.NDArray[np.float64],
        method: str,
    ) -> "Model": ...
    def thresholded(
        self,
        x: Csr,
        y: npt.NDArray[np.float64],
        rule: str,
        value: float,
        false_positive: float,
    ) -> Tuple["Model", dict[str, Any]]: ...
    def probabilities(
        self,
        x: Csr,
    ) -> npt.NDArray[np.float64]: ...
    @property
    def calibration(self) -> Optional[str]: ...
    @property
    def threshold(self) -> Optional[Tuple[float, str]]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> "Model": ...

def fit_kernel(
    x: Csr,
    y: npt.NDArray[np.float64],
    sample_weight: Optional[npt.NDArray[np.float64]] = None,
    *,
    c: float = 1.0,
    kernel: str = "rbf",
    gamma: Optional[float] = None,
    degree: int = 3,
    coef0: float = 0.0,
    tol: Optional[float] = None,
    gap: Optional[float] = None,
    max_iter: Optional[float] = None,
    class_weight: Sequence[Tuple[float, float]] = ...,
    multi_class: str = "auto",
    random_state: int = 0,
    scale: str = "none",
    classes: Optional[Sequence[float]] = None,
    verbose: int = 0,
    approximation: Optional[str] = None,
    n_components: int = 100,
) -> Tuple[Model, dict[str, Any]]: ...

class LatentModel:
    def predict(
        self, x: Csr, lengths: Optional[Any] = None
    ) -> Any: ...
    @property
    def task(self) -> str: ...
    @property
    def n_latent(self) -> int: ...
    @property
    def w(self) -> Any: ...
    @property
    def latent_objective(self) -> float: ...
    @property
    def rounds(self) -> list[dict[str, Any]]: ...
    @property
    def latent_stop(self) -> str: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "LatentModel": ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> "LatentModel": ...

def fit_latent(
    task: str,
    x: Csr,
    y: Any,
    lengths: Optional[Any],
    n_labels: int,
    learning: Learning,
    *,
    latent: int = 2,
) -> Tuple[LatentModel, dict[str, Any]]: ...

class StructModel:
    @property
    def task(self) -> str: ...
    @property
    def is_second_order(self) -> bool: ...
    @property
    def n_labels(self) -> int: ...
    @property
    def w(self) -> npt.NDArray[np.float64]: ...
    def predict(
        self,
        x: Csr,
        lengths: Optional[npt.NDArray[np.int64]] = None,
    ) -> npt.NDArray[np.int64]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "StructModel": ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> "StructModel": ...

def fit_structured(
    task: str,
    x: Csr,
    y: npt.NDArray[np.int64],
    lengths: Optional[npt.NDArray[np.int64]],
    n_labels: int,
    learning: Learning,
    *,
    order: int = 1,
) -> Tuple[StructModel, dict[str, Any]]: ...

GraphArrays = Tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    int,
    npt.NDArray[np.int64],
    Optional[npt.NDArray[np.float64]],
    Optional[npt.NDArray[np.int64]],
]

class GraphModel:
    @property
    def task(self) -> str: ...
    @property
    def n_labels(self) -> int: ...
    @property
    def n_edge_features(self) -> int: ...
    @property
    def directed(self) -> bool: ...
    @property
    def inference(self) -> str: ...
    @property
    def w(self) -> npt.NDArray[np.float64]: ...
    def predict(self, graphs: Sequence[GraphArrays]) -> List[npt.NDArray[np.int64]]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "GraphModel": ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> "GraphModel": ...

def fit_graph(
    graphs: Sequence[GraphArrays],
    n_labels: int,
    inference: Optional[str],
    directed: bool,
    learning: Learning,
    *,
    class_weight: Sequence[Tuple[float, float]] = ...,
    relaxed: bool = False,
) -> Tuple[GraphModel, dict[str, Any]]: ...

def fit_custom(model: Any, x: Sequence[Any], y: Sequence[Any], learning: Learning) -> Tuple[npt.NDArray[np.float64], dict[str, Any]]: ...

class TaggerModel:
    @property
    def tags(self) -> list[str]: ...
    @property
    def n_columns(self) -> int: ...
    def tag(self, rows: Sequence[Sequence[Sequence[str]]]) -> list[list[str]]: ...
    def evaluate(
        self, rows: Sequence[Sequence[Sequence[str]]], tags: Sequence[Sequence[str]]
    ) -> dict[str, Any]: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "TaggerModel": ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> "TaggerModel": ...

def fit_tagger(
    rows: Sequence[Sequence[Sequence[str]]],
    tags: Sequence[Sequence[str]],
    template: str,
    learning: Learning,
    *,
    min_count: int = 1,
    class_weight: Optional[dict[str, float]] = None,
) -> Tuple[TaggerModel, dict[str, Any]]: ...

def model_kind(path: str) -> str: ...
