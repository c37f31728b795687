"""NKI beta-2's timing entry points run on the simulator: nki.benchmark
(benchmark_result.nc_latency.get_latency_percentile), nki.profile and the
nki.typing.tensor[shape, dtype] placeholders they are called with
(docs/python.md "Benchmarking and profiling")."""
import json
import os

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.language as nl
import tpbsim.nki.typing as nt

PERCENTILES = (0, 1, 10, 25, 50, 90, 99, 100)


def exp_rows(a):
    """exp of a [P, F] tensor, 128 rows at a time."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for p in nl.affine_range(a.shape[0] // 128):
        t = nl.load(a[p * 128:(p + 1) * 128, :])
        nl.store(out[p * 128:(p + 1) * 128, :], value=nl.exp(t))
    return out


def copy_ints(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


def rng_array(shape):
    return np.random.default_rng(7).uniform(-1, 1, shape).astype(np.float32)


def test_tensor_spec_inputs_are_zeros():
    assert np.array_equal(nki.jit(exp_rows)(nt.tensor[[128, 64], nl.float32]),
                          np.ones((128, 64), np.float32))
    got = nki.jit(exp_rows)(nt.tensor[(256, 8), nl.bfloat16])
    assert got.dtype == nl.bfloat16 and got.shape == (256, 8)
    assert np.array_equal(got.astype(np.float32), np.ones((256, 8), np.float32))
    ints = nki.jit(copy_ints)(nt.tensor[[128, 4], nl.int32])
    assert ints.dtype == np.int32 and not ints.any()
    assert repr(nt.tensor[[128, 4], nl.int32]) == "tensor[[128, 4], int32]"


@pytest.mark.parametrize("item, msg", [
    (([0, 4], nl.float32), "positive sizes"),
    (([4, 4.5], nl.float32), "positive sizes"),
    ((5, nl.float32, 1), "a shape and a dtype"),
    ((5, 1.5), "unknown dtype"),
    (([128, 4], object()), "unknown dtype"),
])
def test_tensor_spec_errors(item, msg):
    with pytest.raises(nki.NkiError, match=msg):
        nt.tensor[item]


def test_benchmark_latency_is_the_simulated_time(capsys):
    a = rng_array((256, 512))
    bench = nki.benchmark(warmup=2, iters=10)(exp_rows)
    np.testing.assert_allclose(bench(a), np.exp(a), rtol=1e-5)
    printed = capsys.readouterr().out
    lat = bench.benchmark_result.nc_latency
    # the same kernel simulated through the plain API: its device time
    ns = tpbsim.simulate(nki.jit(exp_rows), a).stats["sim_time_ns"]
    assert ns > 0
    for p in PERCENTILES:
        assert lat.get_latency_percentile(p) == pytest.approx(ns / 1000.0)
    assert "nki.benchmark(exp_rows): simulated latency %.3f us" % (ns / 1000.0) in printed
    assert bench.benchmark_result.stats["sim_time_ns"] == ns
    for bad in (95, 50.5, "50", True):
        with pytest.raises(ValueError, match="available percentiles"):
            lat.get_latency_percentile(bad)


def test_benchmark_latency_grows_with_the_work():
    """Four 128-row tiles take longer than one, and less than four times
    as long: the loop's loads, exps and stores overlap (loads issued by SP,
    stores by Pool, rotating buffers)."""
    small = nki.benchmark(exp_rows)
    small(nt.tensor[[128, 512], nl.float32])
    big = nki.benchmark(exp_rows)
    big(nt.tensor[[512, 512], nl.float32])
    t_small = small.benchmark_result.nc_latency.get_latency_percentile(50)
    t_big = big.benchmark_result.nc_latency.get_latency_percentile(50)
    assert t_small < t_big < 3 * t_small, (t_small, t_big)


def test_benchmark_result_needs_a_benchmarked_call():
    bench = nki.benchmark(exp_rows)
    with pytest.raises(AttributeError, match="set when the kernel is called"):
        bench.benchmark_result
    with pytest.raises(AttributeError, match="made with nki.benchmark"):
        nki.jit(exp_rows).benchmark_result


def test_benchmark_forms():
    a = rng_array((128, 64))
    want = tpbsim.simulate(nki.jit(exp_rows), a).stats["sim_time_ns"] / 1000.0
    forms = [nki.benchmark(exp_rows),
             nki.benchmark(warmup=1, iters=1)(exp_rows),
             nki.benchmark(nki.jit(exp_rows)),           # benchmark(version) of a jit kernel
             nki.jit(mode="benchmark", warmup=1, iters=3)(exp_rows)]
    for k in forms:
        np.testing.assert_allclose(k(a), np.exp(a), rtol=1e-5)
        assert k.benchmark_result.nc_latency.get_latency_percentile(50) == pytest.approx(want)
    lat = forms[3].benchmark_result.nc_latency
    assert (lat.warmup, lat.iters) == (1, 3)
    # a beta-1 launch grid: kernel[2] runs two instances; the result is the
    # benchmarked kernel's
    grid = nki.benchmark(exp_rows)
    grid[2](a)
    assert grid.benchmark_result.nc_latency.get_latency_percentile(50) > want


@pytest.mark.parametrize("opts, msg", [
    (dict(iters=0), "iters must be an integer >= 1"),
    (dict(warmup=-1), "warmup must be an integer >= 0"),
    (dict(iters=2.5), "iters must be an integer"),
])
def test_benchmark_options_checked(opts, msg):
    with pytest.raises(nki.NkiError, match=msg):
        nki.benchmark(**opts)


def test_benchmark_saves_the_artifacts_and_trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = nki.benchmark(save_neff_name="file.neff", save_trace_name="profile.ntff")(exp_rows)
    bench(nt.tensor[[128, 64], nl.float32])
    assert sorted(os.listdir(tmp_path)) == ["file.tpb", "profile.json", "profile.summary.json"]
    assert os.path.isfile(tmp_path / "file.tpb" / "tensor-map.json")
    trace = json.loads((tmp_path / "profile.json").read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert any(n and "Activat" in n for n in names)   # the exp on the Activation engine
    summary = json.loads((tmp_path / "profile.summary.json").read_text())
    lat = bench.benchmark_result.nc_latency.get_latency_percentile(50)
    assert summary["sim_time_ns"] / 1000.0 == pytest.approx(lat)
    # a benchmark replaces what it saved before (neuron-bench does)
    bench(nt.tensor[[256, 64], nl.float32])
    summary2 = json.loads((tmp_path / "profile.summary.json").read_text())
    assert summary2["sim_time_ns"] > summary["sim_time_ns"]


def test_profile_writes_its_working_directory(tmp_path):
    with pytest.raises(nki.NkiError, match="absolute path"):
        nki.profile(working_directory="profiles")(exp_rows)
    with pytest.raises(nki.NkiError, match="absolute path"):
        nki.profile(exp_rows)
    missing = nki.profile(working_directory=str(tmp_path / "nope"))(exp_rows)
    with pytest.raises(nki.NkiError, match="does not exist"):
        missing(nt.tensor[[128, 64], nl.float32])

    prof = nki.profile(working_directory=str(tmp_path), save_neff_name="k.neff",
                       save_trace_name="k.ntff", profile_nth=2)(exp_rows)
    assert prof(rng_array((128, 64))) is None
    assert sorted(os.listdir(tmp_path)) == ["k.json", "k.summary.json", "k.tpb"]
    before = (tmp_path / "k.summary.json").read_text()
    # overwrite=False (NKI's default): the second profile is refused, before
    # it runs, and the first one's files stay as they were
    with pytest.raises(nki.NkiError, match="already exists"):
        prof(rng_array((256, 64)))
    assert (tmp_path / "k.summary.json").read_text() == before
    assert sorted(os.listdir(tmp_path)) == ["k.json", "k.summary.json", "k.tpb"]
    again = nki.profile(working_directory=str(tmp_path), save_neff_name="k.neff",
                        save_trace_name="k.ntff", overwrite=True)(exp_rows)
    again(rng_array((256, 64)))
    after = json.loads((tmp_path / "k.summary.json").read_text())
    assert after["sim_time_ns"] > json.loads(before)["sim_time_ns"]


def test_failed_profile_writes_nothing(tmp_path):
    def broken(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((256, 64), dtype=a.dtype, buffer=nl.sbuf)   # 256 partitions
        nl.store(out, value=nl.exp(t))
        return out
    prof = nki.profile(working_directory=str(tmp_path))(broken)
    with pytest.raises(tpbsim.TpbError, match="partition"):
        prof(nt.tensor[[128, 64], nl.float32])
    assert os.listdir(tmp_path) == []
