"""tpbsim.nki.typing: NKI's type names (annotations only)."""
from ._trace import NkiTensor as tensor  # noqa: F401
# an argument the kernel writes (the NKI Library's router_topk outputs)
from ._trace import NkiTensor as mutable_tensor  # noqa: F401
# NKI beta-1's `nt.tensor[nt.mutable]` (an input the kernel writes in place)
from ._bench import mutable  # noqa: F401
