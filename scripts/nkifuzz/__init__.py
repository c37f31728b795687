"""nkifuzz: differential random testing of tpbsim's NKI front end.

Each seed generates one small NKI kernel (Python source), runs it through
tpbsim and checks every tile it makes against a NumPy model written from
NKI's documentation (aws-neuron-sdk nki/api/nki/{isa,language}) and
docs/semantics.md -- never from tpbsim's own output.  Entry point:
scripts/nki-fuzz; docs/reliability.md "Differential fuzzing of the NKI
front end" describes what is covered and the tolerances.

Modules: numerics (dtype tables, rounding), models (per-op NumPy models),
compare (tolerance check), gen (the kernel builder), ops_nl / ops_isa /
ops_pe (the op families), families (the registry), runner (run a seed)."""
