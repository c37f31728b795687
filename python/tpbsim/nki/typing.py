"""tpbsim.nki.typing: NKI's type names (annotations only)."""
from ._trace import NkiTensor as tensor  # noqa: F401
