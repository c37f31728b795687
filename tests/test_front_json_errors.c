/* encoder/frontend_json.c: error paths of kernel files -- the seed's
 * messages, the front-end's own validation, names and types, bounds,
 * malformed JSON, nesting and runaway loops. */
#include "front_json_util.h"

/* Inline assembly and unique_indices: what the front-end refuses, naming
 * the field (seed 001 §7.5, seed 002 unique_indices). */
static void test_inline_asm_and_unique_errors(void **state)
{
    (void)state;
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'inline_asm', 'opcode': 'Frobnicate', 'operands': []}",
               "field 'opcode'", "unknown instruction 'Frobnicate'");
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'inline_asm', 'opcode': 'DmaTrigger', 'operands': []}",
               "DmaTrigger is a dma instruction", NULL);
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'inline_asm', 'opcode': 'TensorTensor', 'num_inputs': 1,"
               " 'operands': [['in7', 'g'], ['out', 'g']]}",
               "entry 0: 'in7' is not a tile operand of format TT", NULL);
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'inline_asm', 'opcode': 'TensorTensor', 'num_inputs': 2,"
               " 'operands': [['in0', 'g'], ['in1', 'g'], ['out', 'g']], 'asm_attrs': {'op': 'frob'}}",
               "field 'asm_attrs'", "op: unknown ALU value 'frob'");
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'inline_asm', 'opcode': 'TensorTensor', 'num_inputs': 2,"
               " 'operands': [['in0', 'g'], ['in1', 'g'], ['out', 'g']], 'asm_attrs': {'in0': 1}}",
               "'in0' is not a field of format TT", NULL);
    fails_with("{'op': 'inline_asm_bytes', 'asm_bytes': '4110'}",
               "field 'asm_bytes'", "2 bytes; a bundle is 64");
    fails_with("{'op': 'inline_asm_bytes', 'asm_bytes': '41zz'}",
               "field 'asm_bytes'", "hex digit pairs");
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': 'g', 'src': 'a[0:128, 0:64]', 'unique_indices': true}",
               "field 'unique_indices'", "applies to a scatter-add");
    /* load `other` (init_value): a memset fill, so an SBUF destination only */
    fails_with("{'op': 'tile', 'name': 'pp', 'shape': [128, 64], 'dtype': 'float32', "
               "'buffer': 'psum'},"
               "{'op': 'load', 'dst': 'pp', 'src': 'a[0:128, 0:64]', 'other': 0}",
               "field 'other'", "must be an SBUF tile");
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'store', 'dst': 'a[0:128, 0:64]', 'src': 'g', 'other': 0}",
               "'other'", NULL);
}

/* indirect_dim (NKI .ap(indirect_dim=)): the indexed dim moves to the
 * front of the AP (the lowering's indirect dims); the refusals name it. */
static void test_indirect_dim(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("idx", "[128, 1]", "int32") T("g", "[128, 150]", "float32")
           "{'op': 'load', 'dst': 'g', 'src': {'tensor': 'a.reshape([150, 2, 512])[0:150, 0:2, 5]',"
           " 'index': 'idx', 'indirect_dim': 1}}", &k);
    const tir_op_t *op = &k.ops[k.nops - 1];
    assert_int_equal(op->kind, TIR_INDIRECT_LOAD);
    assert_int_equal(op->src[0]->step[0], 512);    /* dim 1: the indexed one */
    assert_int_equal(op->src[0]->count[0], 128);   /* one row per index */
    assert_int_equal(op->src[0]->step[1], 1024);
    assert_int_equal(op->src[0]->count[1], 150);
    assert_int_equal(op->src[0]->offset, 5);
    assert_int_equal(op->rare->index_bound, 2);
    tir_kernel_free(&k);
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx', 'indirect_dim': 2}}",
               "field 'indirect_dim'", "2 is not a dimension of a 2-D tensor");
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx', 'indirect_dim': 1,"
               " 'cols': '0:64'}}",
               "field 'cols'", "applies with indirect_dim 0 only");
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 'g', 'src': {'tensor': 'tab[0:128, 3]', 'index': 'idx',"
               " 'indirect_dim': 1}}",
               "the indirect dimension (1) must be a slice, not an index", NULL);
}

static void test_seed_messages_dma(void **state)
{
    (void)state;
    /* a partition stride is a re-derived partition AP on a direct DMA only
     * (docs/compiler.md "DMA lowering"); a compute op still refuses it */
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'memset', 'dst': 'g[0:128:2, :]', 'value': 0}",
               "dim 0 of a tile access must step over partitions (step 128, row size 64)", NULL);
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': {'tensor': 'tab', 'index': 'idx'},"
               " 'src': {'tensor': 'tab', 'index': 'idx'}}",
               "k.json: body[2] (dma_copy): ``src`` and ``dst`` operands cannot both be "
               "indirect memory accesses", NULL);
    /* oob_mode.skip on a static direct copy: nothing can be out of bounds
     * when it runs, so it is taken (the NKI Library's MX MoE passes it);
     * with a register offset it is the dynamic-address check (the
     * trigger's bounds, test_dma_copy_regs); refused with the seed's
     * message on dma_transpose below */
    tir_kernel_t k;
    parses(T("g", "[128, 64]", "float32")
           "{'op': 'dma_copy', 'dst': 'g', 'src': 'a[0:128, 0:64]', 'oob_mode': 'skip'}", &k);
    assert_int_equal(k.ops[k.nops - 1].kind, TIR_DMA_COPY);
    tir_kernel_free(&k);
    fails_with(T("g", "[64, 128]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': 'a[0:128, 0:64]', 'oob_mode': 'skip'}",
               "oob_mode.skip is not supported for direct memory access", NULL);
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': 'a[0:128, 0:64]', 'axes': [0, 1]}",
               "(0, 1) provided for 2D transpose, only (1, 0) supported.", NULL);
    fails_with(T("g", "[8, 16, 4]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': {'tensor': 'a', 'ap': [[512, 4], [64, 16], [1, 8]]},"
               " 'axes': [1, 2, 0]}",
               "(1, 2, 0) provided for 3D transpose, only (2, 1, 0) supported.", NULL);
    fails_with(T("g", "[8, 4, 4, 2]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': {'tensor': 'a', 'ap': [[512, 2], [64, 4], [8, 4], [1, 8]]},"
               " 'axes': [3, 2, 1, 0]}",
               "(3, 2, 1, 0) provided for 4D transpose, only (3, 1, 2, 0) supported.", NULL);
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[64, 128]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx'}}",
               "(1, 0) provided for gather transpose, only 3D supported.", NULL);
    /* a gather-transpose index is one per partition: the index TAP would
     * read a [128, 2] one row-major where NKI reads it column-major */
    {
        tir_kernel_t gk;
        parses(T("idx", "[128, 1]", "int32") T("g", "[64, 1, 128]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': {'tensor': 'tab.reshape(1000, 1, 64)',"
               " 'index': 'idx'}, 'axes': [2, 1, 0]}", &gk);
        tir_kernel_free(&gk);
    }
    fails_with(T("idx", "[128, 2]", "int32") T("g", "[64, 1, 256]", "float32")
               "{'op': 'dma_transpose', 'dst': 'g', 'src': {'tensor': 'tab.reshape(1000, 1, 64)',"
               " 'index': 'idx'}, 'axes': [2, 1, 0]}",
               "field 'index'", "[128, 2]: a gather-transpose takes one index per partition");
    /* nc_find_index8 writes uint16 or uint32 indices (NKI), nothing else */
    {
        tir_kernel_t fk;
        parses(T("t", "[128, 64]", "float32") T("v", "[128, 8]", "float32")
               T("i16", "[128, 8]", "uint16")
               "{'op': 'find_index8', 'dst': 'i16', 'src': 't', 'vals': 'v'}", &fk);
        tir_kernel_free(&fk);
    }
    fails_with(T("t", "[128, 64]", "float32") T("v", "[128, 8]", "float32")
               T("i32", "[128, 8]", "int32")
               "{'op': 'find_index8', 'dst': 'i32', 'src': 't', 'vals': 'v'}",
               "field 'dst'", "dtype int32 (indices are uint16 or uint32)");
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'indirect_save', 'dst': {'tensor': 'tab', 'index': 'idx'}, 'src': 'g',"
               " 'rmw_op': 'multiply'}",
               "scatter op can only support bypass or add for now", "field 'rmw_op'");
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': {'tensor': 'tab', 'index': 'idx'}, 'src': 'g',"
               " 'rmw_op': 'add', 'oob_mode': 'skip'}",
               "scatter add cannot have other modes except for error", NULL);
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx'},"
               " 'rmw_op': 'add'}",
               "``dst_rmw_op`` is not supported indirect memory access on source (``src``) "
               "operand", NULL);
    fails_with(T("idx", "[128, 1]", "float32") T("g", "[128, 64]", "float32")
               "{'op': 'indirect_load', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx'}}",
               "field 'index': dtype float32 not allowed (int32 or uint32)", NULL);
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'indirect_load', 'dst': 'g', 'src': 'tab[0:128]'}",
               "indirect_load needs an indirect source", NULL);
}

/* gather_flattened's legality gate (seed 004: uint32 indices, data and
 * indices on the same partitions) and dma_transpose's rank gate. */
static void test_seed_gather_flattened_and_rank(void **state)
{
    (void)state;
    fails_with(T("d", "[128, 64]", "float32") T("ix", "[128, 8]", "int32") T("o", "[128, 8]", "float32")
               "{'op': 'gather_flattened', 'dst': 'o', 'data': 'd', 'indices': 'ix'}",
               "dtype int32 not allowed (uint32)", NULL);
    fails_with(T("d", "[64, 64]", "float32") T("ix", "[128, 8]", "uint32") T("o", "[128, 8]", "float32")
               "{'op': 'gather_flattened', 'dst': 'o', 'data': 'd', 'indices': 'ix'}",
               "partition size 128 differs from data's 64", NULL);
    fails_with(T("g", "[2, 2, 2, 2, 2]", "float32") T("h", "[2, 2, 2, 2, 2]", "float32")
               "{'op': 'dma_transpose', 'dst': 'h', 'src': 'g', 'axes': [4, 3, 2, 1, 0]}",
               "field 'axes': 5 axes (at most 4)", NULL);
}

/* "deps": names of earlier ops (the latest of each name), set on every op
 * the statement emits; unknown names and non-lists fail. */
static void test_deps(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("t", "[128, 64]", "float32") T("u", "[128, 64]", "float32")
           "{'op': 'memset', 'dst': 't', 'value': 1, 'name': 'first'},"
           "{'op': 'memset', 'dst': 'u', 'value': 2, 'name': 'second'},"
           "{'op': 'activation', 'dst': 'u', 'src': 'u', 'func': 'exp', 'deps': ['first']},"
           "{'op': 'store', 'dst': 'out[0:128, 0:64]', 'src': 3.0, 'deps': ['second', 'first']}",
           &k);
    assert_int_equal(k.nops, 5);
    assert_int_equal(k.ops[0].rare->ndeps, 0);
    assert_int_equal(k.ops[2].rare->ndeps, 1);
    assert_int_equal(k.ops[2].rare->deps[0], 0);
    /* the value store is two ops (memset + store): both carry the deps */
    for (int i = 3; i < 5; i++) {
        assert_int_equal(k.ops[i].rare->ndeps, 2);
        assert_int_equal(k.ops[i].rare->deps[0], 1);
        assert_int_equal(k.ops[i].rare->deps[1], 0);
    }
    tir_kernel_free(&k);
    /* a noop (codegenNoOp: nothing emitted) is a join point: naming it in
     * deps means naming its deps */
    parses(T("t", "[128, 64]", "float32") T("u", "[128, 64]", "float32")
           "{'op': 'memset', 'dst': 't', 'value': 1, 'name': 'first'},"
           "{'op': 'memset', 'dst': 'u', 'value': 2, 'name': 'second'},"
           "{'op': 'noop', 'name': 'join', 'deps': ['first', 'second']},"
           "{'op': 'activation', 'dst': 'u', 'src': 'u', 'func': 'exp', 'deps': ['join']}",
           &k);
    assert_int_equal(k.nops, 4);
    assert_int_equal(k.ops[2].kind, TIR_NOOP);
    assert_int_equal(k.ops[3].rare->ndeps, 2);
    assert_int_equal(k.ops[3].rare->deps[0], 0);
    assert_int_equal(k.ops[3].rare->deps[1], 1);
    tir_kernel_free(&k);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'memset', 'dst': 't', 'value': 1, 'deps': ['nope']}",
               "field 'deps': no earlier op named 'nope'", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'memset', 'dst': 't', 'value': 1, 'deps': 'x'}",
               "field 'deps': must be a list of at most 4 op names", NULL);
}

static void test_seed_messages_engines(void **state)
{
    (void)state;
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'memset', 'dst': 't', 'value': 1, 'engine': 'act'}",
               "k.json: body[1] (memset): field 'engine': Memset engine can only be Vector or "
               "GpSIMD or Unknown.", NULL);
    fails_with(T("t", "[128, 64]", "float32") T("ix", "[128, 4]", "uint16") T("d", "[128, 4]", "float32")
               "{'op': 'local_gather', 'dst': 'd', 'src': 't', 'index': 'ix', 'num_valid_indices': 65}",
               "num_valid_indices cannot exceed total indices per core", NULL);
    fails_with(T("t", "[128, 64]", "float32") T("ix", "[128, 512]", "uint16") T("d", "[128, 512]", "float32")
               "{'op': 'local_gather', 'dst': 'd', 'src': 't', 'index': 'ix'}",
               "number of indices per core must be <= 4096", NULL);
    fails_with(T("t", "[128, 64]", "float32") T("ix", "[128, 4]", "uint16") T("d", "[128, 12]", "float32")
               "{'op': 'local_gather', 'dst': 'd', 'src': 't', 'index': 'ix', 'num_elem_per_idx': 3}",
               "num_elem_per_idx must be one of [1, 2, 4, 8, 16, 32]", NULL);
    fails_with(T("t", "[64, 64]", "float32") T("ix", "[128, 4]", "uint16") T("d", "[128, 4]", "float32")
               "{'op': 'local_gather', 'dst': 'd', 'src': 't', 'index': 'ix'}",
               "src_buffer and index must have same partition dimension size", NULL);
}

/* ---- our own validation ---- */

static void test_validation_own(void **state)
{
    (void)state;
    fails_with(T("t", "[256, 4]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0}",
               "body[0]: sbuf tile 't': field 'shape': partition dim 256 > 128", NULL);
    fails_with(T("t", "[128, 100000]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0}",
               "exceed the SBUF partition size", NULL);
    fails_with(T("t", "[128, 64]", "float32") T("u", "[128, 32]", "float32")
               "{'op': 'tensor_tensor', 'dst': 't', 'in0': 't', 'in1': 'u', 'operator': 'add'}",
               "body[2] (tensor_tensor): field 'in1': shape [128, 32] does not match 'dst' shape "
               "[128, 64]", NULL);
    fails_with(T("s", "[128, 128]", "bfloat16") T("m", "[128, 512]", "bfloat16")
               T("d", "[128, 512]", "float32")
               "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
               "(matmul): field 'dst': must be a PSUM tile ('d' is in SBUF)", NULL);
    fails_with(T("s", "[128, 128]", "int32") T("m", "[128, 512]", "bfloat16")
               TP("d", "[128, 512]", "float32")
               "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
               "field 'stationary': dtype int32 not allowed on the PE", NULL);
    fails_with(T("s", "[128, 128]", "bfloat16") T("m", "[64, 512]", "bfloat16")
               TP("d", "[128, 512]", "float32")
               "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
               "field 'moving': contraction (partition) size 64 differs", NULL);
    fails_with(TP("p", "[128, 64]", "float32") T("t", "[128, 64]", "float32")
               "{'op': 'tensor_copy', 'dst': 't', 'src': 'p', 'engine': 'pool'}",
               "field 'src': the Pool (GpSimd) engine cannot access PSUM (tile 'p')", NULL);
    fails_with(TP("p", "[128, 64]", "int32")
               "{'op': 'iota', 'dst': 'p', 'pattern': [[1, 64]]}",
               "the Pool (GpSimd) engine cannot access PSUM", NULL);
    fails_with(TP("p", "[128, 64]", "float32") TP("q", "[128, 64]", "float32")
               "{'op': 'tensor_tensor', 'dst': 'p', 'in0': 'p', 'in1': 'q', 'operator': 'add'}",
               "in0 and in1 cannot both be in PSUM", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'tensor_tensor', 'dst': 't', 'in0': 't', 'in1': 'a[0:128, 0:64]', 'operator': 'add'}",
               "field 'in1': 'a' is an HBM tensor", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'activation', 'dst': 't', 'src': 't', 'func': 'exp', 'engine': 'dve'}",
               "field 'engine': activation cannot run on engine DVE", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'bitwise_and', "
               "'operand0': 1, 'engine': 'act'}",
               "runs only on the Vector engine", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'activation', 'dst': 't', 'src': 't', 'func': 'exp', 'scale': 't'}",
               "field 'scale': a per-partition scalar must be a [128, 1] tile access", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'store', 'dst': 'a[0:128, 0:64]', 'src': 't'},"
               "{'op': 'load', 'dst': 't', 'src': 't'}",
               "body[2] (load): field 'src': must be an HBM tensor ('t' is in SBUF)", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a[0:128, 0:32]'}",
               "field 'src': shape [128, 32] does not match 'dst' shape [128, 64]", NULL);
    fails_with(T("t", "[128, 8]", "float32") T("d", "[128, 4]", "float32")
               "{'op': 'max8', 'dst': 'd', 'src': 't'}", "field 'dst': must be [128, 8]", NULL);
    fails_with("{'op': 'load_tensor_to_register', 'src': 'a[0, 0]', 'reg': 64}",
               "field 'reg': 64 out of range 0..63", NULL);
}

/* ---- names, types, bounds, malformed input ---- */

static void test_names_and_types(void **state)
{
    (void)state;
    fails_with("{'op': 'load', 'dst': 'nope', 'src': 'a'}",
               "k.json: body[0]: field 'dst': unknown tensor or tile 'nope'", NULL);
    fails_with("{'op': 'frobnicate'}", "body[0]: field 'op': unknown op 'frobnicate'", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0, 'colour': 1}",
               "body[1]: field 'colour': unknown field (allowed: op, name, engine, deps, schedule, dst, value, random)",
               NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0, 'value': 1}",
               "field 'value': given twice", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 64], 'dtype': 'float64'}",
               "body[0]: field 'dtype': unknown dtype 'float64'", NULL);
    /* after a valid dtype text (kept by fj_get_dtype), a bad one still fails */
    fails_with(T("t", "[128, 64]", "float32") T("u", "[128, 64]", "float32")
               "{'op': 'tile', 'name': 'v', 'shape': [128, 64], 'dtype': 'float32x'}",
               "body[2]: field 'dtype': unknown dtype 'float32x'", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': '128', 'dtype': 'float32'}",
               "body[0]: field 'shape': expected an array of integers, got a string", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 2.5], 'dtype': 'float32'}",
               "field 'shape': 2.5 is not an integer", NULL);
    fails_with("{'op': 'tile', 'name': 't', 'shape': [128, 1e19], 'dtype': 'float32'}",
               "field 'shape': 1e+19 is outside the 64-bit integer range", NULL);
    /* 2^40 x 2^40 overflowed int64 (UBSan; wrapped to 0 elements), 2026-12-03 sweep */
    fails_with("{'op': 'tile', 'name': 't', 'shape': [1, 1099511627776, 1099511627776], "
               "'dtype': 'float32'}", "field 'shape': more than 2^40 elements", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'activation', 'dst': 't', 'src': 't', 'func': 'explode'}",
               "field 'func': unknown name 'explode'", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0, 'engine': 'gpu'}",
               "field 'engine': unknown engine 'gpu'", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 5, 'value': 0}",
               "field 'dst': expected an operand", NULL);
    fails_with("42", "body[0]: expected an op object, got a number", NULL);
    fails_with("{'op': 'for', 'var': 'i', 'range': [2], 'body': ["
               T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0}]},"
               "{'op': 'memset', 'dst': 't', 'value': 1}",
               "body[1]: field 'dst': tile 't' is out of scope here (declared at body[0].body[0])",
               NULL);
    fails_with("{'op': 'tile', 'name': 'a', 'shape': [128, 64], 'dtype': 'float32'}",
               "tile 'a' has the name of an HBM tensor", NULL);
    fails_with("{'op': 'for', 'var': 'pid', 'range': [2], 'body': []}",
               "field 'var': 'pid' is not a usable variable name", NULL);
}

/* A flat body's plain load and store (two strings, no other / src_reg /
 * dst_reg: read as a loop's kept statement is) fail as the full read
 * does, in its order: dst, then src, then rmw_op. */
static void test_flat_dma_errors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {T("t", "[128, 512]", "float32") "{'op': 'load', 'dst': 'zz', 'src': 'yy'}",
         "k.json: body[1]: field 'dst': unknown tensor or tile 'zz'"},
        {T("t", "[128, 512]", "float32")
         "{'op': 'store', 'dst': 'out[0:128, :]', 'src': 'nope[0:1, :]', 'rmw_op': 'max'}",
         "body[1]: field 'src': unknown tensor or tile 'nope'"},
        {T("t", "[1, 512]", "float32") "{'op': 'store', 'dst': 'out[400, :]', 'src': 't'}",
         "field 'dst': index 400 out of range for 'out' dimension 0 (300)"},
        {T("t", "[1, 512]", "float32")
         "{'op': 'store', 'dst': 'out[0:1, :]', 'src': 't', 'rmw_op': 'max'}",
         "body[1]: field 'rmw_op': only add is supported"},
        {"{'op': 'for', 'var': 'i', 'range': [2], 'body': [" T("t", "[1, 512]", "float32")
         "{'op': 'load', 'dst': 't', 'src': 'a[0:1, :]'}]},"
         "{'op': 'store', 'dst': 'out[0:1, :]', 'src': 't'}",
         "body[1]: field 'src': tile 't' is out of scope here (declared at body[0].body[0])"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fails_with(cases[i][0], cases[i][1], NULL);
    tir_kernel_t k;   /* and reads the same when it passes */
    parses(T("t", "[1, 512]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a[2:3, :]'},"
           "{'op': 'store', 'dst': 'out[4:5, :]', 'src': 't', 'rmw_op': 'add'}", &k);
    assert_int_equal(k.nops, 2);
    assert_ptr_equal(k.ops[0].dst, k.ops[1].src[0]);
    assert_int_equal(k.ops[0].src[0]->offset, 2 * 512);
    assert_int_equal(k.ops[1].dst->offset, 4 * 512);
    assert_true(k.ops[1].flags & TIR_F_RMW_ADD);
    assert_int_equal(k.ops[0].nsrc, 1);
    tir_kernel_free(&k);
}

/* A kernel file nested past cJSON's limit names the limit and where. */
static void test_nesting_limit(void **state)
{
    (void)state;
    size_t depth = CJSON_NESTING_LIMIT + 5;
    const char *head = "{\"kernel\": \"deep\", \"x\": ";
    size_t n = strlen(head) + 2 * depth + 2;
    char *text = malloc(n);
    assert_non_null(text);
    size_t o = strlen(head);
    memcpy(text, head, o);
    for (size_t i = 0; i < depth; i++)
        text[o++] = '[';
    for (size_t i = 0; i < depth; i++)
        text[o++] = ']';
    text[o++] = '}';
    tir_kernel_t k;
    tpb_err_t e;
    memset(&e, 0, sizeof e);
    enc_front_opts_t opts = {NULL, 0, 0, NULL};
    assert_int_equal(enc_parse_kernel_json_opts(text, o, "deep.json", EX, &opts, &k, &e), -1);
    tir_kernel_free(&k);
    free(text);
    if (!strstr(e.msg, "deep.json:1:") || !strstr(e.msg, "nested deeper than the limit of 1000"))
        fail_msg("message '%s' does not name the file, position and nesting limit", e.msg);
}

/* Dtype views (NKI .ap(dtype=) / tensor.view): the pattern counts elements
 * of the view's dtype over the tensor's bytes; bounds, divisibility and the
 * ops that take one. */
static void test_dtype_view(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("t", "[128, 64]", "float32")
           "{'op': 'load', 'dst': {'tensor': 't', 'ap': [[256, 128], [1, 256]], 'dtype': 'uint8'}, "
           "'src': {'tensor': 'a', 'offset': 8, 'ap': [[2048, 128], [1, 256]], 'dtype': 'uint8'}},"
           "{'op': 'store', 'dst': 'out[0:128, 0:64]', 'src': {'tensor': 't', 'ap': [[64, 128], [1, 64]], "
           "'dtype': 'float32'}}", &k);
    assert_int_equal(k.ops[0].src[0]->view, ISA_DT_UINT8 + 1);
    assert_int_equal(k.ops[0].src[0]->offset, 8);
    assert_int_equal(k.ops[0].dst->view, ISA_DT_UINT8 + 1);
    assert_int_equal(k.ops[1].src[0]->view, 0);   /* its own dtype: no view */
    tir_kernel_free(&k);
    /* 300 x 512 fp32 = 614400 bytes: past them, in uint8 elements */
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'load', 'dst': {'tensor': 't', 'ap': [[256, 1], [1, 256]], 'dtype': 'uint8'}, "
               "'src': {'tensor': 'a', 'offset': 614300, 'ap': [[1, 1], [1, 256]], 'dtype': 'uint8'}}",
               "body[1]: field 'src': access pattern reaches elements 614300..614555 of 'a' viewed as "
               "'uint8' which has 614400 elements", NULL);
    fails_with(T("u", "[128, 3]", "uint8")
               "{'op': 'store', 'dst': 'out[0:128, 0:1]', 'src': {'tensor': 'u', 'ap': [[1, 128], [1, 1]], "
               "'dtype': 'float32'}}",
               "field 'src': 'u' (uint8) viewed as float32: a partition's bytes are not a multiple of "
               "its 4-byte elements", NULL);
    /* a compute operand takes a view (the engine's access pattern carries
     * the dtype); an indirect DMA does not (its addresses count the
     * tensor's own elements) */
    parses(T("t", "[128, 64]", "float32") T("u", "[128, 128]", "bfloat16")
           "{'op': 'tensor_copy', 'dst': 'u', 'src': {'tensor': 't', 'ap': [[128, 128], [1, 128]], "
           "'dtype': 'bfloat16'}}", &k);
    assert_int_equal(k.ops[k.nops - 1].src[0]->view, ISA_DT_BF16 + 1);
    assert_int_equal(k.ops[k.nops - 1].src[0]->count[1], 128);
    tir_kernel_free(&k);
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'load', 'dst': {'tensor': 'g', 'ap': [[64, 128], [1, 64]], 'dtype': 'int32'}, "
               "'src': {'tensor': 'tab', 'index': 'idx'}}",
               "(indirect_load): field 'dst': a dtype view (int32) of 'g' is taken by compute ops and "
               "by a direct load, store or dma_copy without a register offset, not by this DMA", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'store', 'dst': 'out[0:128, 0:64]', 'src': {'tensor': 't', 'ap': [[64, 128], "
               "[1, 64]], 'dtype': 'float64'}}", "field 'dtype': unknown dtype 'float64'", NULL);
}

static void test_bounds(void **state)
{
    (void)state;
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a[400:528, 0:64]'}",
               "body[1]: field 'src': slice 400:528 of 'a' dimension 0 (300) is empty", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'load', 'dst': 't[0:1, 0:64]', 'src': 'a[300, 0:64]'}",
               "field 'src': index 300 out of range for 'a' dimension 0 (300)", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a[-1:127, 0:64]'}",
               "negative slice bound", NULL);
    fails_with(T("t", "[128, 64]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a[0:128, 0:64, 0]'}",
               "3 indices for 'a' which has 2 dimensions", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 't', 'src': {'tensor': 'a', 'offset': 153000, 'ap': [[512, 128], [1, 64]]}}",
               "access pattern reaches elements 153000..", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 't', 'src': {'tensor': 'a', 'ap': [[1099511627776, 4294967296], [1, 64]]}}",
               "field 'src': access pattern overflows", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 't', 'src': {'tensor': 'a', 'offset': -1, 'ap': [[512, 128], [1, 64]]}}",
               "field 'src': offset -1 outside 'a'", NULL);
    {
        tir_kernel_t k;
        parses(T("t", "[128, 64]", "float32")
               "{'op': 'load', 'dst': 't[0:1, 0:64]', 'src': 'a[5:10:1000000000000000000, 0:64]'}", &k);
        assert_int_equal(k.ops[0].src[0]->offset, 5 * 512);
        assert_int_equal(k.ops[0].src[0]->count[0], 1);
        tir_kernel_free(&k);
    }
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'memset', 'dst': {'tensor': 't', 'ap': [[1, 128], [1, 64]]}, 'value': 0}",
               "its step must be the row size 64", NULL);
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'for', 'var': 'i', 'range': [3], 'body': ["
               "  {'op': 'load', 'dst': 't', 'src': 'a[i*128:(i+1)*128, 0:64]'}]}",
               "body[1].body[0] (load): field 'src': shape [44, 64] does not match 'dst' shape "
               "[128, 64] (2816 elements against 8192: a DMA moves equal element counts) (at i=2)",
               NULL);
    /* NKI: only the element counts must agree; the shapes may differ (the
     * elements pair in C order) */
    tir_kernel_t k;
    parses(T("t", "[128, 64]", "float32")
           "{'op': 'load', 'dst': 't', 'src': 'a.reshape([600, 256])[0:32, :]'}", &k);
    assert_int_equal(k.ops[k.nops - 1].kind, TIR_LOAD);
    tir_kernel_free(&k);
}

static void test_malformed_json(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    const char *bad = "{\n  \"inputs\": [],\n  \"body\": [ {\"op\": \"load\",, } ]\n}";
    assert_int_equal(enc_parse_kernel_json(bad, strlen(bad), "m.json", NULL, NULL, 0, &k, &e), -1);
    assert_non_null(strstr(e.msg, "m.json:3:"));
    assert_non_null(strstr(e.msg, "invalid JSON"));
    tir_kernel_free(&k);
    const char *cases[][2] = {
        {"", "m.json:1:1: invalid JSON"},
        {"[1, 2]", "(top level): expected a JSON object, got an array"},
        {"{\"body\": []} trailing", "invalid JSON"},
        {"{}", "field 'body': missing"},
        {"{\"body\": {}}", "field 'body': expected an array of ops, got an object"},
        {"{\"body\": [], \"extra\": 1}", "field 'extra': unknown field"},
        {"{\"body\": [], \"target\": \"trn9\"}", "unknown target 'trn9'"},
        {"{\"body\": [], \"inputs\": [{\"name\": \"x\", \"shape\": [0], \"dtype\": \"int8\"}]}",
         "inputs[0]: input 'x': field 'shape': dimension 0 is 0"},
        {"{\"body\": [], \"inputs\": [{\"name\": \"x y\", \"shape\": [1], \"dtype\": \"int8\"}]}",
         "not a valid identifier"},
        {"{\"body\": [], \"grid\": [0]}", "grid: axis 0 is 0"},
        {"{\"body\": [], \"grid\": [\"nc(2)\", \"2*nc(2)\"]}", "both carry nc()"},
        {"{\"body\": [], \"grid\": [\"nc(2)+1\"]}", "is not nc(k)"},
        {"{\"body\": [], \"grid\": [\"233333333333333333333333333*nc(2)\"]}",
         "grid: axis 0: nc(2) with 9223372036854775807 instances per core is more than"},
        {"{\"body\": [], \"grid\": [\"nc(2)*40000\"]}", "40000 instances per core is more than 65536"},
        {"{\"body\": [], \"constants\": [{\"name\": \"c\", \"dtype\": \"int8\", \"value\": [1, 300]}]}",
         "constants[0]: field 'value': 300 out of range for int8"},
        {"{\"body\": [], \"constants\": [{\"name\": \"c\", \"dtype\": \"int8\", \"value\": [[1], [2, 3]]}]}",
         "not a rectangular"},
        {"{\"body\": [], \"constants\": [{\"name\": \"c\", \"dtype\": \"int8\"}]}",
         "give exactly one of 'file', 'value' or 'identity'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&e, 0, sizeof e);
        int rc = enc_parse_kernel_json(cases[i][0], strlen(cases[i][0]), "m.json", NULL, NULL, 0,
                                       &k, &e);
        tir_kernel_free(&k);
        if (rc != -1 || !strstr(e.msg, cases[i][1]))
            fail_msg("case %zu: rc %d message '%s' lacks '%s'", i, rc, e.msg, cases[i][1]);
    }
    /* missing file */
    assert_int_equal(enc_parse_kernel_file("/nonexistent/k.json", NULL, 0, &k, &e), -1);
    assert_non_null(strstr(e.msg, "/nonexistent/k.json"));
    tir_kernel_free(&k);
    /* very deep JSON nesting is rejected by the parser, not a crash */
    size_t n = 200000;
    char *deep = malloc(2 * n + 1);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = 0;
    assert_int_equal(enc_parse_kernel_json(deep, 2 * n, "d.json", NULL, NULL, 0, &k, &e), -1);
    tir_kernel_free(&k);
    free(deep);
}

static void test_runaway_loops(void **state)
{
    (void)state;
    fails_with("{'op': 'for', 'var': 'i', 'range': [1000000000000], 'body': ["
               T("t", "[128, 64]", "float32") "{'op': 'memset', 'dst': 't', 'value': 0}]}",
               "body[0]: field 'range':", "runaway loop");
    fails_with(T("t", "[128, 64]", "float32")
               "{'op': 'for', 'var': 'i', 'range': [100000], 'body': ["
               "  {'op': 'for', 'var': 'j', 'range': [1000], 'body': ["
               "    {'op': 'memset', 'dst': 't', 'value': 0}]}]}",
               "unrolls to about 100000000 ops, more than the limit of 10000000", NULL);
    fails_with("{'op': 'for', 'var': 'i', 'range': [0, 10, 0], 'body': []}", "step is 0", NULL);
    /* a user limit */
    char *j = kernel(T("t", "[128, 64]", "float32")
                     "{'op': 'for', 'var': 'i', 'range': [50], 'body': ["
                     "  {'op': 'memset', 'dst': 't', 'value': 0}]}");
    tir_kernel_t k;
    tpb_err_t e;
    enc_front_opts_t o = {NULL, 0, 20, NULL};
    assert_int_equal(parse_opts(j, &o, &k, &e), -1);
    assert_non_null(strstr(e.msg, "more than the limit of 20"));
    tir_kernel_free(&k);
    o.max_ops = 50;
    assert_int_equal(parse_opts(j, &o, &k, &e), 0);
    assert_int_equal(k.nops, 50);
    tir_kernel_free(&k);
    free(j);
    /* deep loop nesting */
    char body[16384] = "";
    for (int i = 0; i < 80; i++)
        strcat(body, "{'op': 'for', 'var': 'i', 'range': [1], 'body': [");
    for (int i = 0; i < 80; i++)
        strcat(body, "]}");
    fails_with(body, "nested more than 64 deep", NULL);
    /* negative-step loops count down */
    parses(T("t", "[128, 64]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [2, -1, -1], 'body': ["
           "  {'op': 'load', 'dst': 't[0:min(128, 300 - i*128)]', 'src': 'a[i*128:i*128+128, 0:64]'}]}", &k);
    assert_int_equal(k.nops, 3);
    assert_int_equal(k.ops[0].src[0]->offset, 256 * 512);
    assert_int_equal(k.ops[0].src[0]->count[0], 44);
    assert_int_equal(k.ops[2].src[0]->offset, 0);
    tir_kernel_free(&k);
}

/* Register-offset dma_copy (docs/kernel-format.md): src_reg / dst_reg
 * reach the op; a non-HBM moved side, a gather and a number src are
 * refused naming the field. */
static void test_dma_copy_regs(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'dma_copy', 'dst': 'out[0:64, :]', 'src': 'a[0:64, :]', 'src_reg': 3,"
           " 'dst_reg': 5}", &k);
    const tir_op_t *op = &k.ops[k.nops - 1];
    assert_int_equal(op->kind, TIR_DMA_COPY);
    assert_int_equal(op->rare->src_reg, 3);
    assert_int_equal(op->rare->dst_reg, 5);
    tir_kernel_free(&k);
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': 'out[0:128, 0:64]', 'src': 'g', 'src_reg': 3}",
               "field 'src'", "must be an HBM tensor (it has src_reg)");
    fails_with(T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': 'g', 'src': 'a[0:128, 0:64]', 'dst_reg': 3}",
               "field 'dst'", "must be an HBM tensor (it has dst_reg)");
    fails_with(T("idx", "[128, 1]", "int32") T("g", "[128, 64]", "float32")
               "{'op': 'dma_copy', 'dst': 'g', 'src': {'tensor': 'tab', 'index': 'idx'},"
               " 'src_reg': 3}",
               "field 'src_reg'", "direct access on both sides");
    fails_with("{'op': 'dma_copy', 'dst': 'out[0:1, 0:8]', 'src': 2.0, 'dst_reg': 3}",
               "field 'src'", "no rmw_op, src_reg or dst_reg");
    fails_with("{'op': 'dma_copy', 'dst': 'out[0:64, :]', 'src': 'a[0:64, :]', 'src_reg': 64}",
               "field 'src_reg'", "out of range 0..63");
    /* oob_mode skip with a register offset: taken (NKI's dynamic-address
     * check; the simulator skips the transfer, docs/semantics-dma.md) */
    parses("{'op': 'dma_copy', 'dst': 'out[0:64, :]', 'src': 'a[0:64, :]', 'src_reg': 3,"
           " 'oob_mode': 'skip'}", &k);
    assert_int_equal(k.ops[k.nops - 1].rare->src_reg, 3);
    assert_int_equal(k.ops[k.nops - 1].rare->oob_mode, ISA_OOB_SKIP);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_asm_and_unique_errors),
        cmocka_unit_test(test_seed_messages_dma),
        cmocka_unit_test(test_indirect_dim),
        cmocka_unit_test(test_seed_gather_flattened_and_rank),
        cmocka_unit_test(test_deps),
        cmocka_unit_test(test_seed_messages_engines),
        cmocka_unit_test(test_validation_own),
        cmocka_unit_test(test_names_and_types),
        cmocka_unit_test(test_flat_dma_errors),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_dtype_view),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_runaway_loops),
        cmocka_unit_test(test_dma_copy_regs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
