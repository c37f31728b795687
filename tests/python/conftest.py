"""pytest set-up: import tpbsim from this checkout (python/) and libtpb
from the build directory CTest passes in TPBSIM_LIB."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "nki"))
