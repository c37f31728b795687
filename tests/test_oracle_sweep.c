/* test_oracle_sweep - the compile-and-simulate oracle (tests/oracle.h,
 * docs/reliability.md) over a deterministic sweep: one small JSON kernel
 * per op of docs/kernel-format.md, per edge shape (one partition, 128
 * partitions, [1, 1], unit free dims), per dtype (fp32, bf16, fp16, int32,
 * uint8, fp8) and, where the op takes it, a PSUM dst.  A kernel the compiler
 * refuses is fine; one it compiles must simulate (zero inputs, a small cycle
 * limit) without the simulator refusing an instruction's fields.
 *
 * TPB_ORACLE_VERBOSE=1 prints every case; TPB_ORACLE_ONLY=<op> runs the
 * templates whose name starts with it; TPB_ORACLE_DUMP=<dir> writes the
 * first 8 kernels of each template that ran as seeds for fuzz_kernel_sim;
 * TPB_ORACLE_FULL=1 adds trn1, trn3, the large shapes and five dtypes to
 * the base pass and runs the other passes with three dtypes (CTest: trn2,
 * four dtypes in the base pass, float32 in the others). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "oracle.h"

/* An op template: its body (after the tiles x, y of shape $S / dtype $D
 * loaded from a, b) with $-variables:
 *   $S shape, $D dtype, $P partitions ($Q twice that), $F elements per partition ($F+1:
 *   one more), $G 16 x $F (local_gather's indices per core), $G1 the shape's
 *   first free dim,
 *   $B the dst tile's buffer (sbuf, or psum when the template allows it),
 *   $I the integer index dtype of the case (uint32).
 * HBM: inputs a, b ($S $D), c ([$P, 1] float32); outputs out ($S $D),
 * oc ([$P, 1] $D), of ([$P, 1] float32), o8 ([$P, 8] float32),
 * o6 ([$P, 6] float32), o1 ([1, $F] $D). */
typedef struct {
    const char *name;
    bool psum;        /* also with dst in PSUM */
    const char *body;
} tmpl_t;

#define Z "{'op':'tile','name':'z','shape':$S,'dtype':'$D','buffer':'$B'},"
#define ZC "{'op':'tile','name':'zc','shape':[$P,1],'dtype':'$D','buffer':'$B'},"
#define ZF "{'op':'tile','name':'zf','shape':[$P,1],'dtype':'float32'},"
#define COL "{'op':'tile','name':'col','shape':[$P,1],'dtype':'float32'}," \
            "{'op':'load','dst':'col','src':'c'},"
#define STZ "{'op':'store','dst':'out','src':'z'}"
#define STZC "{'op':'store','dst':'oc','src':'zc'}"
#define STZF "{'op':'store','dst':'of','src':'zf'}"

static const tmpl_t tmpls[] = {
    { "tensor_copy.dve", true, Z "{'op':'tensor_copy','dst':'z','src':'x','engine':'dve'}," STZ },
    { "tensor_copy.act", true, Z "{'op':'tensor_copy','dst':'z','src':'x','engine':'act'}," STZ },
    { "tensor_copy.pool", false, Z "{'op':'tensor_copy','dst':'z','src':'x','engine':'pool'}," STZ },
    { "tensor_tensor.add", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'add'}," STZ },
    { "tensor_tensor.pool", false, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'multiply','engine':'pool'}," STZ },
    { "tensor_tensor.max", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'max'}," STZ },
    { "tensor_tensor.and", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'bitwise_and'}," STZ },
    { "tensor_tensor.num", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':3,'operator':'subtract'}," STZ },
    { "tensor_scalar.imm", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'multiply','operand0':2,'op1':'add','operand1':1}," STZ },
    { "tensor_scalar.act", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'multiply','operand0':2,'op1':'add','operand1':1,'engine':'act'}," STZ },
    { "tensor_scalar.col", true, COL Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'add','operand0':'col','reverse0':true}," STZ },
    { "tensor_scalar.unary", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'abs'}," STZ },
    { "tensor_scalar.shift", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'left_shift','operand0':1}," STZ },
    { "scalar_tensor_tensor", true, Z "{'op':'scalar_tensor_tensor','dst':'z','in0':'x','op0':'multiply','scalar':2,'op1':'add','in1':'y'}," STZ },
    { "scalar_tensor_tensor.col", true, COL Z "{'op':'scalar_tensor_tensor','dst':'z','in0':'x','op0':'subtract','scalar':'col','op1':'max','in1':'y'}," STZ },
    { "activation.exp", true, Z "{'op':'activation','dst':'z','src':'x','func':'exp'}," STZ },
    { "activation.scale_bias", true, COL Z "{'op':'activation','dst':'z','src':'x','func':'relu','scale':'col','bias':'col'}," STZ },
    { "activation.reduce", true, ZF Z "{'op':'activation','dst':'z','src':'x','func':'copy','reduce_op':'add','reduce_res':'zf'}," STZ "," STZF },
    { "activate2", true, Z "{'op':'activate2','dst':'z','src':'x','op0':'multiply','imm0':2,'op1':'add','imm1':1,'func':'copy'}," STZ },
    { "tensor_reduce.add", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'add','axis':1}," STZC },
    { "tensor_reduce.all", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'max','axis':[1,2]}," STZC },
    { "tensor_reduce.axis2", true, "{'op':'tile','name':'zr','shape':[$P,$G1],'dtype':'$D','buffer':'$B'},{'op':'tensor_reduce','dst':'zr','src':'x','operator':'add','axis':2}" },
    { "tensor_reduce.psum_src", false, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'}," ZC "{'op':'tensor_reduce','dst':'zc','src':'xp','operator':'max','axis':1}," STZC },
    { "tensor_copy.psum_src", true, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'}," Z "{'op':'tensor_copy','dst':'z','src':'xp'}," STZ },
    { "activation.psum_src", true, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'}," Z "{'op':'activation','dst':'z','src':'xp','func':'tanh','scale':0.5}," STZ },
    { "tensor_tensor.psum_in1", true, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'y'}," Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'xp','operator':'subtract'}," STZ },
    { "tensor_tensor.inplace", false, "{'op':'tensor_tensor','dst':'x','in0':'x','in1':'y','operator':'multiply'},{'op':'store','dst':'out','src':'x'}" },
    { "tensor_scalar.pool", false, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'max','operand0':0,'engine':'pool'}," STZ },
    { "tensor_scalar.divide", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'divide','operand0':3,'op1':'mod','operand1':2}," STZ },
    { "tensor_scalar.cmp", true, Z "{'op':'tensor_scalar','dst':'z','src':'x','op0':'is_ge','operand0':0}," STZ },
    { "iota.3d", false, Z "{'op':'iota','dst':'z','pattern':[[1,$F],[0,1]],'offset':3,'channel_multiplier':0}," STZ },
    { "transpose.dve_psum_src", false, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'},{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D'},{'op':'transpose','dst':'t','src':'xp','engine':'dve'}" },
    { "tensor_copy.cast_f32", true, "{'op':'tile','name':'zf32','shape':$S,'dtype':'float32','buffer':'$B'},{'op':'tensor_copy','dst':'zf32','src':'x'}" },
    { "tensor_copy.cast_i32", true, "{'op':'tile','name':'zi32','shape':$S,'dtype':'int32','buffer':'$B'},{'op':'tensor_copy','dst':'zi32','src':'x'}" },
    { "tensor_reduce.neg", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'min','axis':1,'negate':true}," STZC },
    { "tensor_reduce.keep", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'add','axis':1,'keepdims':true}," STZC },
    { "tensor_reduce.or", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'bitwise_or','axis':1}," STZC },
    { "tensor_reduce.per_axis", true, ZC "{'op':'tensor_reduce','dst':'zc','src':'x','operator':'add','axis':[1,2],'per_axis':true}," STZC },
    { "tensor_partition_reduce", false, "{'op':'tile','name':'z1','shape':[1,$F],'dtype':'$D'},{'op':'tensor_partition_reduce','dst':'z1','src':'x','operator':'add'},{'op':'store','dst':'o1','src':'z1'}" },
    { "tensor_tensor_scan", true, Z "{'op':'tensor_tensor_scan','dst':'z','in0':'x','in1':'y','initial':0,'op0':'multiply','op1':'add'}," STZ },
    { "tensor_tensor_scan.col", true, COL Z "{'op':'tensor_tensor_scan','dst':'z','in0':'x','in1':'y','initial':'col','op0':'max','op1':'add','reverse0':true}," STZ },
    { "iota", false, Z "{'op':'iota','dst':'z','pattern':[[1,$F]],'offset':0,'channel_multiplier':1}," STZ },
    { "affine_select", false, Z "{'op':'affine_select','dst':'z','on_true':'x','pattern':[[1,$F]],'offset':0,'channel_multiplier':-1,'on_false_value':0}," STZ },
    { "affine_select.dve", true, Z "{'op':'affine_select','dst':'z','on_true':'x','pattern':[[1,$F]],'offset':0,'channel_multiplier':-1,'on_false_value':0,'engine':'dve'}," STZ },
    { "max8", false, "{'op':'tile','name':'z8','shape':[$P,8],'dtype':'float32'},{'op':'max8','dst':'z8','src':'x'},{'op':'store','dst':'o8','src':'z8'}" },
    { "bn_stats", false, "{'op':'tile','name':'z6','shape':[$P,6],'dtype':'float32'},{'op':'bn_stats','dst':'z6','data':'x'},{'op':'store','dst':'o6','src':'z6'}" },
    { "bn_aggr", false, "{'op':'tile','name':'z6','shape':[$P,6],'dtype':'float32'},{'op':'tile','name':'z2','shape':[$P,2],'dtype':'float32'},{'op':'bn_stats','dst':'z6','data':'x'},{'op':'bn_aggr','dst':'z2','data':'z6'},{'op':'store','dst':'o6','src':'z6'}" },
    { "range_select", true, COL ZF Z "{'op':'range_select','dst':'z','on_true_tile':'x','comp_op0':'greater_equal','comp_op1':'less','bound0':'col','bound1':'col','reduce_cmd':'reset_reduce','reduce_res':'zf','reduce_op':'maximum'}," STZ "," STZF },
    { "select_reduce", true, ZF Z "{'op':'select_reduce','dst':'z','predicate':'y','on_true':'x','on_false':0,'reduce_res':'zf','reduce_op':'maximum'}," STZ "," STZF },
    { "reciprocal", true, Z "{'op':'reciprocal','dst':'z','data':'x'}," STZ },
    { "exponential", true, ZF Z "{'op':'exponential','dst':'z','src':'x','max_value':0,'reduce_res':'zf'}," STZ "," STZF },
    { "tensor_copy_predicated", true, Z "{'op':'memset','dst':'z','value':0},{'op':'tensor_copy_predicated','dst':'z','src':'x','predicate':'y'}," STZ },
    { "tensor_copy_predicated.num", true, Z "{'op':'memset','dst':'z','value':0},{'op':'tensor_copy_predicated','dst':'z','src':5,'predicate':'y','reverse_pred':true}," STZ },
    { "find_index8", false, "{'op':'tile','name':'v8','shape':[$P,8],'dtype':'$D'},{'op':'memset','dst':'v8','value':0},{'op':'tile','name':'i8','shape':[$P,8],'dtype':'uint32'},{'op':'find_index8','dst':'i8','src':'x','vals':'v8'},{'op':'tensor_copy','dst':'v8','src':'i8'}" },
    { "match_replace8", false, Z "{'op':'tile','name':'v8','shape':[$P,8],'dtype':'$D'},{'op':'memset','dst':'v8','value':0},{'op':'match_replace8','dst':'z','src':'x','vals':'v8','imm':1}," STZ },
    { "select", true, Z "{'op':'select','dst':'z','pred':'y','on_true':'x','on_false':2}," STZ },
    { "dropout", true, Z "{'op':'dropout','dst':'z','src':'x','prob':0.5}," STZ },
    { "memset", true, Z "{'op':'memset','dst':'z','value':3}," STZ },
    { "memset.pool", false, Z "{'op':'memset','dst':'z','value':3,'engine':'pool'}," STZ },
    { "memset.random", true, Z "{'op':'memset','dst':'z','value':0,'random':true}," STZ },
    { "transpose.dve", true, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D','buffer':'$B'},{'op':'transpose','dst':'t','src':'x','engine':'dve'}" },
    { "transpose.pe", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D','buffer':'psum'},{'op':'transpose','dst':'t','src':'x','engine':'pe'}" },
    { "transpose.pe_f32", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'float32','buffer':'psum'},{'op':'transpose','dst':'t','src':'x','engine':'pe'}" },
    { "matmul", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y'}" },
    { "matmul.acc", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','accumulate':false},{'op':'matmul','dst':'m','stationary':'x','moving':'y','accumulate':true}" },
    { "tensor_scalar_cumulative", true, Z "{'op':'tensor_scalar_cumulative','dst':'z','src':'x','op0':'multiply','op1':'add','imm0':2}," STZ },
    { "tensor_scalar_reduce", true, ZF Z "{'op':'tensor_scalar_reduce','dst':'z','data':'x','op0':'add','operand0':1,'reduce_op':'add','reduce_res':'zf'}," STZ "," STZF },
    { "sequence_bounds", false, "{'op':'tile','name':'sb','shape':[$P,2,$F],'dtype':'$D'},{'op':'sequence_bounds','dst':'sb','segment_ids':'x'}" },
    { "nonzero_with_count", false, "{'op':'tile','name':'nz','shape':[$P,$F+1],'dtype':'int32'},{'op':'nonzero_with_count','dst':'nz','src':'x'}" },
    { "gather_flattened", false, Z "{'op':'tile','name':'ix','shape':$S,'dtype':'uint32'},{'op':'memset','dst':'ix','value':0},{'op':'gather_flattened','dst':'z','data':'x','indices':'ix'}," STZ },
    { "local_gather", false, "{'op':'tile','name':'lg','shape':[$P,$G],'dtype':'$D'},{'op':'tile','name':'ix','shape':$S,'dtype':'uint16'},{'op':'memset','dst':'ix','value':0},{'op':'local_gather','dst':'lg','src_buffer':'x','index':'ix','num_elem_per_idx':1}" },
    { "local_gather.n2", false, "{'op':'tile','name':'lg','shape':[$P,$G,2],'dtype':'$D'},{'op':'tile','name':'ix','shape':$S,'dtype':'uint16'},{'op':'memset','dst':'ix','value':0},{'op':'local_gather','dst':'lg','src_buffer':'x','index':'ix','num_elem_per_idx':2,'num_valid_indices':$G}" },
    { "stream_shuffle", false, Z "{'op':'stream_shuffle','dst':'z','src':'x','shuffle_mask':[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}," STZ },
    { "broadcast_partition", false, "{'op':'tile','name':'r1','shape':[1,$F],'dtype':'$D'},{'op':'tile','name':'bp','shape':[$P,$F],'dtype':'$D'},{'op':'load','dst':'r1','src':'o1'},{'op':'broadcast_partition','dst':'bp','src':'r1'}" },
    { "dma_copy.sbuf", true, Z "{'op':'dma_copy','dst':'z','src':'x'}," STZ },
    { "dma_copy.num", true, Z "{'op':'dma_copy','dst':'z','src':2.5}," STZ },
    { "dma_transpose", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D'},{'op':'dma_transpose','dst':'t','src':'a'}" },
    { "store.rmw", false, "{'op':'store','dst':'out','src':'x','rmw_op':'add'}" },
    { "store.num", false, "{'op':'store','dst':'out','src':1.5}" },
    { "rng", true, Z "{'op':'rng','dst':'z'}," STZ },
    { "rand2", true, Z "{'op':'rand2','dst':'z','min':0,'max':1}," STZ },
    { "quantize_mx", false, "{'op':'tile','name':'q','shape':[$P,$F],'dtype':'float8_e4m3fn'},{'op':'tile','name':'qs','shape':[$P,1],'dtype':'uint8'},{'op':'quantize_mx','dst':'q','src':'x','scale':'qs'}" },
    { "quantize_mx.32", false, "{'op':'tile','name':'qx','shape':[$P,32],'dtype':'$D'},{'op':'memset','dst':'qx','value':1},{'op':'tile','name':'q','shape':[$P,32],'dtype':'float8_e5m2'},{'op':'tile','name':'qs','shape':[$P,1],'dtype':'uint8'},{'op':'quantize_mx','dst':'q','src':'qx','scale':'qs'}" },
    { "quantize_mx.quad", false, "{'op':'tile','name':'qx','shape':[$P,$F,4],'dtype':'$D'},{'op':'memset','dst':'qx','value':1},{'op':'tile','name':'q','shape':[$P,$F],'dtype':'float8_e4m3fn_x4'},{'op':'tile','name':'qs','shape':[$P,$F],'dtype':'float8_e8m0fnu'},{'op':'quantize_mx','dst':'q','src':'qx','scale':'qs'}" },
    { "matmul.bf16_psum", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'bfloat16','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y'}" },
    { "activation.imm_bias", true, Z "{'op':'activation','dst':'z','src':'x','func':'exp','bias':1.5,'scale':2}," STZ },
    { "matmul.transpose", false, "{'op':'tile','name':'m','shape':[$F,$P],'dtype':'$D','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','is_transpose':true}" },
    { "matmul.tile_position", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','tile_position':[0,0],'tile_size':[64,64]}" },
    { "matmul.tile_position2", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','tile_position':[64,32],'tile_size':[64,32]}" },
    { "matmul.onezero", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','is_stationary_onezero':true,'is_moving_onezero':true}" },
    { "matmul.quant_offset", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'matmul','dst':'m','stationary':'x','moving':'y','ifmap_quant_offset':3}" },
    { "matmul.double_row", false, "{'op':'tile','name':'m','shape':[$G1,$G1],'dtype':'float32','buffer':'psum'},{'op':'tile','name':'s2','shape':[$P,2,$G1],'dtype':'$D'},{'op':'memset','dst':'s2','value':1},{'op':'matmul','dst':'m','stationary':'s2','moving':'s2','perf_mode':'double_row'}" },
    { "matmul.k_acc", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'for','var':'k','range':[0,3],'body':[{'op':'matmul','dst':'m','stationary':'x','moving':'y','accumulate':'k > 0'}]}" },
    { "matmul_mx", false, "{'op':'tile','name':'m','shape':[$P,$F],'dtype':'float32','buffer':'psum'},{'op':'tile','name':'ss','shape':[$P,1],'dtype':'uint8'},{'op':'memset','dst':'ss','value':127},{'op':'matmul_mx','dst':'m','stationary':'x','moving':'y','stationary_scale':'ss','moving_scale':'ss'}" },
    { "matmul_sparse", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'tile','name':'tg','shape':$S,'dtype':'uint8'},{'op':'memset','dst':'tg','value':0},{'op':'matmul_sparse','dst':'m','stationary':'x','moving':'y','tags':'tg','compress_ratio':2}" },
    { "matmul_sparse.dense", false, "{'op':'tile','name':'m','shape':[$F,$F],'dtype':'float32','buffer':'psum'},{'op':'tile','name':'tg','shape':[$P,$F],'dtype':'uint8'},{'op':'iota','dst':'tg','pattern':[[0,$F]],'offset':0,'channel_multiplier':1},{'op':'tensor_scalar','dst':'tg','src':'tg','op0':'mod','operand0':2},{'op':'tile','name':'md','shape':[$Q,$F],'dtype':'$D'},{'op':'memset','dst':'md','value':1},{'op':'matmul_sparse','dst':'m','stationary':'x','moving':'md','tags':'tg','compress_ratio':2}" },
    { "activation.reduce_cmds", true, ZF Z "{'op':'activation','dst':'z','src':'x','func':'copy','reduce_op':'max','reduce_cmd':'reset_reduce'},{'op':'activation','dst':'z','src':'y','func':'square','reduce_op':'max','reduce_cmd':'reduce','reduce_res':'zf'}," STZ "," STZF },
    { "activation.funcs", true, Z "{'op':'activation','dst':'z','src':'x','func':'gelu'},{'op':'activation','dst':'z','src':'z','func':'sigmoid'},{'op':'activation','dst':'z','src':'z','func':'rsqrt'},{'op':'activation','dst':'z','src':'z','func':'silu'}," STZ },
    { "activation.accumulate", true, ZF Z "{'op':'activation','dst':'z','src':'x','func':'exp','reduce_op':'add','reduce_res':'zf','accumulate':true}," STZ },
    { "activate2.rev", true, COL Z "{'op':'activate2','dst':'z','src':'x','op0':'subtract','imm0':'col','op1':'multiply','imm1':2,'func':'exp','reverse0':true,'reverse1':true,'bias':'col'}," STZ },
    { "activate2.prelu", true, COL Z "{'op':'activate2','dst':'z','src':'x','op0':'add','imm0':1,'func':'prelu','relu_param':'col'}," STZ },
    { "tensor_scalar_reduce.load", true, COL ZF Z "{'op':'tensor_scalar_reduce','dst':'z','data':'x','op0':'multiply','operand0':'col','reduce_op':'max','reduce_cmd':'load_reduce','reduce_init':'col','reduce_res':'zf','reduce_res_negate':true}," STZ "," STZF },
    { "tensor_scalar_reduce.chain", true, ZF Z "{'op':'tensor_scalar_reduce','dst':'z','data':'x','op0':'abs','reduce_op':'min'},{'op':'tensor_scalar_reduce','dst':'z','data':'y','op0':'add','operand0':2,'reduce_op':'min','reduce_cmd':'reduce','reduce_res':'zf'}," STZ "," STZF },
    { "tensor_scalar_cumulative.load", true, COL Z "{'op':'tensor_scalar_cumulative','dst':'z','src':'x','op0':'add','op1':'max','imm0':'col','imm1':'col','reduce_cmd':'load_reduce'}," STZ },
    { "exponential.tile", true, COL ZF Z "{'op':'exponential','dst':'z','src':'x','max_value':'col','reduce_res':'zf','reduce_cmd':'load_reduce','reduce_init':'col'}," STZ "," STZF },
    { "select_reduce.tile", true, COL ZF Z "{'op':'select_reduce','dst':'z','predicate':'y','on_true':'x','on_false':'col','reduce_res':'zf','reduce_op':'maximum','reverse_pred':true}," STZ "," STZF },
    { "select.tile", true, Z "{'op':'select','dst':'z','pred':'y','on_true':'x','on_false':'y'}," STZ },
    { "dropout.tile", true, COL Z "{'op':'dropout','dst':'z','src':'x','prob':'col'}," STZ },
    { "dropout.keep", true, Z "{'op':'dropout','dst':'z','src':'x','keep_rate':0.25}," STZ },
    { "rand2.tile", true, COL Z "{'op':'tensor_scalar','dst':'col','src':'col','op0':'add','operand0':1},{'op':'rand2','dst':'z','min':0,'max':'col'}," STZ },
    { "rng.pool", false, Z "{'op':'rng','dst':'z','engine':'gpsimd'}," STZ },
    { "rand_state", false, "{'op':'tile','name':'st','shape':[$P,6],'dtype':'uint32'},{'op':'rand_get_state','dst':'st'},{'op':'rand_set_state','src_seeds':'st'}" },
    { "rand_state.vector", false, "{'op':'tile','name':'st','shape':[$P,24],'dtype':'uint32'},{'op':'rand_get_state','dst':'st','engine':'vector'},{'op':'rand_set_state','src_seeds':'st','engine':'vector'}" },
    { "set_rng_seed", false, "{'op':'tile','name':'sd','shape':[1,1],'dtype':'uint32'},{'op':'memset','dst':'sd','value':7},{'op':'set_rng_seed','src_seeds':'sd'}" },
    { "iota.lnc", false, Z "{'op':'iota','dst':'z','pattern':[[2,$F]],'offset':1,'channel_multiplier':3,'lnc_multiplier':5}," STZ },
    { "affine_select.rev", false, Z "{'op':'affine_select','dst':'z','on_true':'x','pattern':[[1,$F]],'offset':-2,'channel_multiplier':1,'cmp_op':'less','on_false_value':-1,'reverse_pred':true}," STZ },
    { "tensor_partition_reduce.max", false, "{'op':'tile','name':'z1','shape':[1,$F],'dtype':'$D'},{'op':'tensor_partition_reduce','dst':'z1','src':'x','operator':'max'},{'op':'store','dst':'o1','src':'z1'}" },
    { "tensor_partition_reduce.or", false, "{'op':'tile','name':'z1','shape':[1,$F],'dtype':'$D'},{'op':'tensor_partition_reduce','dst':'z1','src':'x','operator':'bitwise_or'},{'op':'store','dst':'o1','src':'z1'}" },
    { "find_index8.bcast", false, "{'op':'tile','name':'v8','shape':[1,8],'dtype':'$D'},{'op':'memset','dst':'v8','value':0},{'op':'tile','name':'i8','shape':[$P,8],'dtype':'uint16'},{'op':'find_index8','dst':'i8','src':'x','vals':'v8'}" },
    { "match_replace8.idx", false, Z "{'op':'tile','name':'v8','shape':[$P,8],'dtype':'$D'},{'op':'memset','dst':'v8','value':0},{'op':'tile','name':'i8','shape':[$P,8],'dtype':'uint32'},{'op':'match_replace8','dst':'z','src':'x','vals':'v8','imm':'-inf','dst_idx':'i8'}," STZ },
    { "topk", false, "{'op':'tile','name':'tv','shape':[$P,8],'dtype':'bfloat16'},{'op':'tile','name':'ti','shape':[$P,8],'dtype':'uint32'},{'op':'topk','val_dst':'tv','idx_dst':'ti','src':'x','n':8}" },
    { "sequence_bounds.i32", false, "{'op':'tile','name':'sb','shape':[$P,2,$F],'dtype':'int32'},{'op':'sequence_bounds','dst':'sb','segment_ids':'x'}" },
    { "nonzero_with_count.off", false, "{'op':'tile','name':'nz','shape':[$P,$F+1],'dtype':'int32'},{'op':'nonzero_with_count','dst':'nz','src':'x','index_offset':3,'padding_val':7}" },
    { "dma_transpose.sbuf", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D'},{'op':'dma_transpose','dst':'t','src':'x'}" },
    { "dma_transpose.cast", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'float32'},{'op':'dma_transpose','dst':'t','src':'a'}" },
    { "dma_compute", false, "{'op':'tile','name':'dc','shape':$S,'dtype':'float32'},{'op':'dma_compute','dst':'dc','srcs':['x','y','x'],'reduce_op':'add','scales':[1,2,0.5]}" },
    { "dma_compute.two", false, Z "{'op':'dma_compute','dst':'z','srcs':['x','y'],'reduce_op':'add'}," STZ },
    { "load.cast", false, "{'op':'tile','name':'lc','shape':$S,'dtype':'float32'},{'op':'load','dst':'lc','src':'a'}" },
    { "load.psum", false, "{'op':'tile','name':'lp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'load','dst':'lp','src':'a'},{'op':'store','dst':'out','src':'lp'}" },
    { "store.cast", false, "{'op':'tile','name':'sc','shape':$S,'dtype':'float32'},{'op':'tensor_copy','dst':'sc','src':'x'},{'op':'store','dst':'out','src':'sc'}" },
    { "device_print", false, "{'op':'device_print','prefix':'x','src':'x'}" },
    { "tensor_tensor_scan.psum", true, "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'}," Z "{'op':'tensor_tensor_scan','dst':'z','in0':'xp','in1':'y','initial':1,'op0':'add','op1':'multiply','reverse1':true}," STZ },
    { "stream_shuffle.bcast", false, "{'op':'tile','name':'r1','shape':[1,$F],'dtype':'$D'},{'op':'memset','dst':'r1','value':1},{'op':'tile','name':'ss','shape':[32,$F],'dtype':'$D'},{'op':'stream_shuffle','dst':'ss','src':'r1','shuffle_mask':[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}" },
    { "stream_shuffle.keep", false, Z "{'op':'stream_shuffle','dst':'z','src':'x','shuffle_mask':[255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0,255,0]}," STZ },
    { "bn_stats.3d", false, "{'op':'tile','name':'z6','shape':[$P,1,6],'dtype':'float32'},{'op':'bn_stats','dst':'z6','data':'x'}" },
    { "transpose.dve32", true, "{'op':'tile','name':'x32','shape':[32,32],'dtype':'$D'},{'op':'memset','dst':'x32','value':1},{'op':'tile','name':'t','shape':[32,32],'dtype':'$D','buffer':'$B'},{'op':'transpose','dst':'t','src':'x32','engine':'dve'}" },
    { "transpose.dve64", false, "{'op':'tile','name':'x64','shape':[64,64],'dtype':'$D'},{'op':'memset','dst':'x64','value':1},{'op':'tile','name':'t','shape':[64,64],'dtype':'$D'},{'op':'transpose','dst':'t','src':'x64','engine':'dve'}" },
    { "for.slices", false, "{'op':'tile','name':'acc','shape':[$P,1],'dtype':'float32'},{'op':'memset','dst':'acc','value':0},{'op':'for','var':'i','range':[0,$G1],'body':[{'op':'tensor_tensor','dst':'acc','in0':'acc','in1':'x[:, i]','operator':'add'}]},{'op':'store','dst':'of','src':'acc'}" },
#define FF "{'op':'tile','name':'ff','shape':$S,'dtype':'float32'},{'op':'memset','dst':'ff','value':2},"
#define II "{'op':'tile','name':'ii','shape':$S,'dtype':'int32'},{'op':'memset','dst':'ii','value':1},"
    { "mixed.tt_f32_in1", true, FF Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'ff','operator':'add'}," STZ },
    { "mixed.tt_i32_in1", true, II Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'ii','operator':'multiply'}," STZ },
    { "mixed.tt_i32_bitwise", true, II Z "{'op':'tensor_tensor','dst':'z','in0':'ii','in1':'x','operator':'bitwise_xor'}," STZ },
    { "mixed.tt_pool_i32", false, II Z "{'op':'tensor_tensor','dst':'z','in0':'ii','in1':'x','operator':'add','engine':'pool'}," STZ },
    { "mixed.ts_f32_dst", true, "{'op':'tile','name':'zf32','shape':$S,'dtype':'float32','buffer':'$B'},{'op':'tensor_scalar','dst':'zf32','src':'x','op0':'subtract','operand0':1,'reverse0':true}" },
    { "mixed.ts_i32_dst_bitwise", true, "{'op':'tile','name':'zi','shape':$S,'dtype':'int32','buffer':'$B'},{'op':'tensor_scalar','dst':'zi','src':'x','op0':'bitwise_and','operand0':3,'op1':'right_shift','operand1':1}" },
    { "mixed.stt_f32", true, FF Z "{'op':'scalar_tensor_tensor','dst':'z','in0':'ff','op0':'add','scalar':1,'op1':'multiply','in1':'x'}," STZ },
    { "mixed.act_f32_src", true, FF Z "{'op':'activation','dst':'z','src':'ff','func':'exp'}," STZ },
    { "mixed.select_f32_pred", true, FF Z "{'op':'select','dst':'z','pred':'ff','on_true':'x','on_false':'y'}," STZ },
    { "mixed.copy_pred_f32", true, FF Z "{'op':'memset','dst':'z','value':0},{'op':'tensor_copy_predicated','dst':'z','src':'x','predicate':'ff'}," STZ },
    { "mixed.scan_f32", true, FF Z "{'op':'tensor_tensor_scan','dst':'z','in0':'ff','in1':'x','initial':0,'op0':'multiply','op1':'add'}," STZ },
    { "mixed.reduce_f32_dst", true, ZF "{'op':'tensor_reduce','dst':'zf','src':'x','operator':'add','axis':1}," STZF },
    { "mixed.iota_i32", false, II "{'op':'iota','dst':'ii','pattern':[[1,$F]],'offset':0,'channel_multiplier':$F}," "{'op':'tensor_copy','dst':'x','src':'ii'}" },
    { "mixed.affine_select_f32", false, FF Z "{'op':'affine_select','dst':'z','on_true':'ff','pattern':[[1,$F]],'offset':0,'channel_multiplier':-1,'on_false_value':0}," STZ },
    { "mixed.reciprocal_f32_dst", true, "{'op':'tile','name':'zf32','shape':$S,'dtype':'float32','buffer':'$B'},{'op':'reciprocal','dst':'zf32','data':'x'}" },
    { "mixed.partition_reduce_f32", false, "{'op':'tile','name':'z1','shape':[1,$F],'dtype':'float32'},{'op':'tensor_partition_reduce','dst':'z1','src':'x','operator':'add'}" },
    { "mixed.transpose_pe_bf16_f32", false, "{'op':'tile','name':'xb','shape':[$P,$F],'dtype':'bfloat16'},{'op':'tensor_copy','dst':'xb','src':'x'},{'op':'tile','name':'t','shape':[$F,$P],'dtype':'float32','buffer':'psum'},{'op':'transpose','dst':'t','src':'xb','engine':'pe'}" },
    { "mixed.max8_bf16", false, "{'op':'tile','name':'z8','shape':[$P,8],'dtype':'bfloat16'},{'op':'max8','dst':'z8','src':'x'}" },
    { "mixed.dma_cast_store", false, "{'op':'tile','name':'sc','shape':$S,'dtype':'bfloat16'},{'op':'tensor_copy','dst':'sc','src':'x'},{'op':'store','dst':'out','src':'sc'}" },
#define XP "{'op':'tile','name':'xp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'xp','src':'x'},"
    { "engine.pool_copy", true, XP Z "{'op':'tensor_copy','dst':'z','src':'xp','engine':'pool'}," STZ },
    { "engine.pool_tt", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'add','engine':'pool'}," STZ },
    { "engine.pool_ts", true, XP Z "{'op':'tensor_scalar','dst':'z','src':'xp','op0':'add','operand0':1,'engine':'pool'}," STZ },
    { "engine.pool_memset", true, Z "{'op':'memset','dst':'z','value':1,'engine':'pool'}," STZ },
    { "engine.pool_iota", true, Z "{'op':'iota','dst':'z','pattern':[[1,$F]],'offset':0,'channel_multiplier':1,'engine':'pool'}," STZ },
    { "engine.pool_reduce", true, XP ZC "{'op':'tensor_reduce','dst':'zc','src':'xp','operator':'add','axis':1,'engine':'pool'}," STZC },
    { "engine.act_copy_psum", true, XP Z "{'op':'tensor_copy','dst':'z','src':'xp','engine':'act'}," STZ },
    { "engine.act_ts_psum", true, XP Z "{'op':'tensor_scalar','dst':'z','src':'xp','op0':'multiply','operand0':3,'engine':'act'}," STZ },
    { "engine.dve_tt_psum_both", true, XP "{'op':'tile','name':'yp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'tensor_copy','dst':'yp','src':'y'}," Z "{'op':'tensor_tensor','dst':'z','in0':'xp','in1':'yp','operator':'add','engine':'dve'}," STZ },
    { "engine.act_tt", true, Z "{'op':'tensor_tensor','dst':'z','in0':'x','in1':'y','operator':'add','engine':'act'}," STZ },
    { "engine.pool_affine_psum", true, XP Z "{'op':'affine_select','dst':'z','on_true':'xp','pattern':[[1,$F]],'offset':0,'channel_multiplier':-1,'on_false_value':0,'engine':'pool'}," STZ },
    { "engine.pool_select", true, Z "{'op':'select','dst':'z','pred':'y','on_true':'x','on_false':2,'engine':'pool'}," STZ },
    { "engine.pool_scan", true, Z "{'op':'tensor_tensor_scan','dst':'z','in0':'x','in1':'y','initial':0,'op0':'multiply','op1':'add','engine':'pool'}," STZ },
    { "engine.pool_stt", true, Z "{'op':'scalar_tensor_tensor','dst':'z','in0':'x','op0':'multiply','scalar':2,'op1':'add','in1':'y','engine':'pool'}," STZ },
    { "engine.act_activation_psum_both", true, XP Z "{'op':'activation','dst':'z','src':'xp','func':'exp','engine':'act'}," STZ },
    { "engine.pool_transpose", false, "{'op':'tile','name':'t','shape':[$F,$P],'dtype':'$D'},{'op':'transpose','dst':'t','src':'x','engine':'pool'}" },
    { "engine.dve_dropout_psum", true, XP Z "{'op':'dropout','dst':'z','src':'xp','prob':0.5}," STZ },
    { "engine.rng_pool_psum", true, Z "{'op':'rng','dst':'z','engine':'gpsimd'}," STZ },
    { "spill.live9", false, "{'op':'tile','name':'s0','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s0','value':0},{'op':'tile','name':'s1','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s1','value':1},{'op':'tile','name':'s2','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s2','value':2},{'op':'tile','name':'s3','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s3','value':3},{'op':'tile','name':'s4','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s4','value':4},{'op':'tile','name':'s5','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s5','value':5},{'op':'tile','name':'s6','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s6','value':6},{'op':'tile','name':'s7','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s7','value':7},{'op':'tile','name':'s8','shape':[$P,7000],'dtype':'$D'},{'op':'memset','dst':'s8','value':8},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s1','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s2','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s3','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s4','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s5','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s6','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s7','operator':'add'},{'op':'tensor_tensor','dst':'s0','in0':'s0','in1':'s8','operator':'add'}" },
    { "dma.hbm_to_hbm", false, "{'op':'dma_copy','dst':'out','src':'a'}" },
    { "dma.hbm_to_hbm_cast", false, "{'op':'dma_copy','dst':'of','src':'c'},{'op':'dma_copy','dst':'oc','src':'c'}" },
    { "dma.psum_to_hbm", false, XP "{'op':'dma_copy','dst':'out','src':'xp'}" },
    { "dma.sbuf_to_psum", false, "{'op':'tile','name':'lp','shape':$S,'dtype':'$D','buffer':'psum'},{'op':'dma_copy','dst':'lp','src':'x'}" },
    { "dma.flat_view", false, "{'op':'tile','name':'fl','shape':[$P,$F],'dtype':'$D'},{'op':'load','dst':'fl','src':'a'},{'op':'store','dst':'out','src':'fl'}" },
    { "dma.transposed_load", false, "{'op':'tile','name':'tl','shape':[$F,$P],'dtype':'$D'},{'op':'load','dst':'tl','src':'a'},{'op':'store','dst':'out','src':'tl'}" },
    { "dma.row_load", false, "{'op':'tile','name':'r1','shape':[1,$F],'dtype':'$D'},{'op':'load','dst':'r1','src':'a[0:1]'},{'op':'store','dst':'o1','src':'r1'}" },
    { "dma.col_store", false, ZC "{'op':'tensor_copy','dst':'zc','src':'x[:, 0:1]'},{'op':'store','dst':'oc','src':'zc'}" },
    { "dma.rmw_add_psum", false, XP "{'op':'store','dst':'out','src':'xp','rmw_op':'add'}" },
    { "dma.qos_queue", false, "{'op':'load','dst':'x','src':'a','dma_qos':1,'dge_mode':'hw'},{'op':'store','dst':'out','src':'x'}" },
    { "dma.broadcast_load", true, "{'op':'tile','name':'r1','shape':[1,$F],'dtype':'$D'},{'op':'load','dst':'r1','src':'a[0:1]'},{'op':'tile','name':'bl','shape':[$P,$F],'dtype':'$D','buffer':'$B'},{'op':'broadcast_partition','dst':'bl','src':'r1'}" },
    { "dma.indirect_load", false, "{'op':'tile','name':'ix','shape':[$P,1],'dtype':'int32'},{'op':'memset','dst':'ix','value':0},{'op':'tile','name':'g','shape':[$P,$F],'dtype':'$D'},{'op':'indirect_load','dst':'g','src':{'tensor':'o1','index':'ix'}}" },
    { "dma.indirect_save_add", false, "{'op':'tile','name':'ix','shape':[$P,1],'dtype':'int32'},{'op':'iota','dst':'ix','pattern':[[0,1]],'offset':0,'channel_multiplier':0},{'op':'tile','name':'g','shape':[$P,$F],'dtype':'float32'},{'op':'memset','dst':'g','value':1},{'op':'indirect_save','dst':{'tensor':'o1','index':'ix'},'src':'g','rmw_op':'add'}" },
    { "dma.register_offset", false, "{'op':'register_alloc','reg':'r','x':0},{'op':'load','dst':'x','src':'a','src_reg':'r'},{'op':'store','dst':'out','src':'x','dst_reg':'r'}" },
    { "register_load_store", false, "{'op':'register_alloc','reg':'r','x':0},{'op':'tile','name':'i1','shape':[1,1],'dtype':'int32'},{'op':'memset','dst':'i1','value':1},{'op':'register_load','dst':'r','src':'i1[0, 0]'},{'op':'register_store','dst':'i1[0, 0]','src':'r'}" },
};

static const char *const shapes[] = { "[1, 1]", "[1, 9]", "[128, 1]", "[128, 9]", "[5, 1, 1]",
                                      "[128, 2, 3]", "[32, 1, 4]", "[64, 3, 1]" };
/* larger and deeper shapes (more than a PSUM bank, four free dims) */
static const char *const big_shapes[] = { "[128, 513]", "[2, 2, 2, 2, 2]", "[1, 1, 1, 1, 1]",
                                          "[3, 4100]", "[16, 1, 1, 40]" };
/* CTest's run takes the first four (TPB_ORACLE_FULL: all) */
static const char *const dtypes[] = { "float32", "bfloat16", "int32", "uint8", "float16",
                                      "float8_e4m3", "int16", "uint32", "float8_e5m2" };

/* Multi-core templates: the header with "grid": ["nc(2)"] (every core
 * loads the whole a and b, stores the whole out: the same values). */
static const tmpl_t mc_tmpls[] = {
    { "mc.sendrecv", false, Z "{'op':'sendrecv','dst':'z','src':'x','peer':'1 - pid'}," STZ },
    { "mc.all_reduce", false, Z "{'op':'all_reduce','srcs':['x'],'dsts':['z'],'operator':'add','replica_group':[[0,1]]}," STZ },
    { "mc.all_reduce_max", false, Z "{'op':'all_reduce','srcs':['x'],'dsts':['z'],'operator':'maximum'}," STZ },
    { "mc.all_gather", false, "{'op':'tile','name':'g2','shape':[$Q,$F],'dtype':'$D'},{'op':'all_gather','srcs':['x'],'dsts':['g2'],'replica_group':[[0,1]]}" },
    { "mc.all_gather_dim1", false, "{'op':'tile','name':'g2','shape':[$P,2,$F],'dtype':'$D'},{'op':'all_gather','srcs':['x'],'dsts':['g2'],'collective_dim':1}" },
    { "mc.reduce_scatter", false, "{'op':'tile','name':'x2','shape':[$Q,$F],'dtype':'$D'},{'op':'memset','dst':'x2','value':1},{'op':'reduce_scatter','srcs':['x2'],'dsts':['x'],'operator':'add'}" },
    { "mc.permute", false, Z "{'op':'collective_permute','srcs':['x'],'dsts':['z'],'source_target_pairs':[[0,1],[1,0]]}," STZ },
    { "mc.rank_id", false, Z "{'op':'rank_id','dst':'z'}," STZ },
    { "mc.barrier", false, Z "{'op':'core_barrier','cores':[0,1]},{'op':'tensor_copy','dst':'z','src':'x'}," STZ },
    { "mc.iota_lnc", false, Z "{'op':'iota','dst':'z','pattern':[[1,$F]],'offset':0,'channel_multiplier':1,'lnc_multiplier':7}," STZ },
    { "mc.all_reduce_hbm", false, "{'op':'all_reduce','srcs':['a'],'dsts':['out'],'operator':'add'}" },
    { "mc.all_to_all_hbm", false, "{'op':'all_to_all','srcs':['a'],'dsts':['out']}" },
};

/* Partition views of the 128-partition shapes: every operand of the op
 * (not the tiles' declarations, nor the loads of x and y) is sliced so,
 * e.g. 'src':'x' -> 'src':'x[32:64]', to reach the start-partition rule
 * (docs/semantics.md §2) and single-partition slices. */
static const char *const views[] = { "[1:2]", "[17:20]", "[32:64]", "[64:128]", "[96:128]",
                                     "[16:48]", "[0:33]" };
static const char *const view_dtypes[] = { "float32", "bfloat16", "int32" };

/* Append view after every quoted name that is a field's value (after ':'),
 * except a tile's own name and the two loads' sources/destinations. */
static void apply_view(const char *in, const char *view, char *out, size_t cap)
{
    size_t n = 0;
    const char *p = in;
    while (*p) {
        assert_true(n + 64 < cap);
        if (*p == '"' && p > in && p[-1] == ':' && (p[1] >= 'a' && p[1] <= 'z')) {
            const char *e = strchr(p + 1, '"');
            bool is_name = p - in >= 7 && !strncmp(p - 7, "\"name\"", 6);
            bool ident = true;
            for (const char *q = p + 1; q < e; q++)
                if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
                    ident = false;
            /* tiles, HBM outputs: names of one to four characters; op names,
             * functions and dtypes are longer or not operands */
            static const char *const opnds[] = { "x", "y", "z", "zc", "zf", "col", "out", "oc",
                                                 "of", "xp", NULL };
            bool opnd = false;
            for (int i = 0; opnds[i]; i++)
                if ((size_t)(e - p - 1) == strlen(opnds[i]) && !strncmp(p + 1, opnds[i], e - p - 1))
                    opnd = true;
            if (!is_name && ident && opnd) {
                memcpy(out + n, p, (size_t)(e - p));
                n += (size_t)(e - p);
                size_t k = strlen(view);
                memcpy(out + n, view, k);
                n += k;
                p = e;
                continue;
            }
        }
        out[n++] = *p++;
    }
    out[n] = 0;
}

typedef struct {
    const char *S, *D, *B;
    int P, F, G1;
    const char *T;
    char M[96];     /* a mask pattern over the shape's free dims: [[1, d1], [1, d2], ...] */
} vars_t;

/* trn2 gets every shape and dtype; trn1 and trn3 (other engine rules:
 * scalar bias, PSUM matmul dtypes, MX) the view dtypes */
static const char *const targets[] = { "trn2", "trn1", "trn3" };

/* Expand $-variables into out (asserts it fits). */
static void expand(const char *t, const vars_t *v, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = t; *p; p++) {
        char tmp[64];
        const char *ins = NULL;
        if (*p == '\'') {
            ins = "\"";
        } else if (*p == '$' && p[1]) {
            p++;
            switch (*p) {
            case 'S': ins = v->S; break;
            case 'D': ins = v->D; break;
            case 'T': ins = v->T; break;
            case 'M': ins = v->M; break;
            case 'B': ins = v->B; break;
            case 'P': snprintf(tmp, sizeof tmp, "%d", v->P); ins = tmp; break;
            case 'Q': snprintf(tmp, sizeof tmp, "%d", 2 * v->P); ins = tmp; break;
            case 'G':
                if (p[1] == '1') {
                    snprintf(tmp, sizeof tmp, "%d", v->G1);
                    p++;
                } else {
                    snprintf(tmp, sizeof tmp, "%d", 16 * v->F);
                }
                ins = tmp;
                break;
            case 'F':
                if (p[1] == '+' && p[2] == '1') {
                    snprintf(tmp, sizeof tmp, "%d", v->F + 1);
                    p += 2;
                } else {
                    snprintf(tmp, sizeof tmp, "%d", v->F);
                }
                ins = tmp;
                break;
            default: fail_msg("bad template variable $%c", *p);
            }
        } else {
            assert_true(n + 1 < cap);
            out[n++] = *p;
            continue;
        }
        size_t k = strlen(ins);
        assert_true(n + k < cap);
        memcpy(out + n, ins, k);
        n += k;
    }
    out[n] = 0;
}

static void shape_dims(const char *s, int *P, int *F, int *G1);

/* The mask pattern of shape s: one [1, d] per free dim. */
static void mask_pattern(vars_t *v)
{
    int d[8] = { 0 }, nd = 0;
    for (const char *p = v->S; *p && nd < 8; p++)
        if (*p >= '0' && *p <= '9') {
            d[nd++] = (int)strtol(p, (char **)&p, 10);
            p--;
        }
    size_t n = 0;
    n += (size_t)snprintf(v->M + n, sizeof v->M - n, "[");
    for (int i = 1; i < nd; i++)
        n += (size_t)snprintf(v->M + n, sizeof v->M - n, "%s[1,%d]", i > 1 ? "," : "", d[i]);
    snprintf(v->M + n, sizeof v->M - n, "]");
}

/* Insert a mask into the template's own op (the name before '.'). */
static bool add_mask(const char *name, const char *in, char *out, size_t cap)
{
    char key[96];
    size_t k = strcspn(name, ".");
    snprintf(key, sizeof key, "{'op':'%.*s',", (int)k, name);
    const char *at = strstr(in, key);
    if (!at)
        return false;
    at += strlen(key);
    int n = snprintf(out, cap, "%.*s'mask':{'pattern':$M,'offset':-1,'channel_multiplier':1,"
                     "'cmp_op':'greater_equal'},%s", (int)(at - in), in, at);
    assert_true(n > 0 && (size_t)n < cap);
    return true;
}

static void shape_dims(const char *s, int *P, int *F, int *G1)
{
    int d[8] = { 0 }, nd = 0;
    for (const char *p = s; *p && nd < 8; p++)
        if (*p >= '0' && *p <= '9') {
            d[nd++] = (int)strtol(p, (char **)&p, 10);
            p--;
        }
    *P = d[0];
    *G1 = d[1];
    *F = 1;
    for (int i = 1; i < nd; i++)
        *F *= d[i];
}

#define HDR_DECL                                                                                  \
    "{'target':'$T','inputs':[{'name':'a','shape':$S,'dtype':'$D'},{'name':'b','shape':$S,'dtype':'$D'},"  \
    "{'name':'c','shape':[$P,1],'dtype':'float32'}],"                                            \
    "'outputs':[{'name':'out','shape':$S,'dtype':'$D'},{'name':'oc','shape':[$P,1],'dtype':'$D'}," \
    "{'name':'of','shape':[$P,1],'dtype':'float32'},{'name':'o8','shape':[$P,8],'dtype':'float32'}," \
    "{'name':'o6','shape':[$P,6],'dtype':'float32'},{'name':'o1','shape':[1,$F],'dtype':'$D'}],"  \
    "'body':["
#define HDR_LOADS                                                                                 \
    "{'op':'tile','name':'x','shape':$S,'dtype':'$D'},"                                          \
    "{'op':'tile','name':'y','shape':$S,'dtype':'$D'},"                                          \
    "{'op':'load','dst':'x','src':'a'},{'op':'load','dst':'y','src':'b'},"
static const char HDR[] = HDR_DECL HDR_LOADS;

static void dump_seed(const char *dir, const char *tmpl, unsigned n, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sweep-%s-%u.json", dir, tmpl, n);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_sweep(void **state)
{
    (void)state;
    const char *only = getenv("TPB_ORACLE_ONLY");
    bool verbose = getenv("TPB_ORACLE_VERBOSE") != NULL;
    const char *dump = getenv("TPB_ORACLE_DUMP");
    /* the passes beyond trn2's base pass take float32 only unless
     * TPB_ORACLE_FULL=1 (then also bfloat16 and int32: minutes) */
    bool full = getenv("TPB_ORACLE_FULL") != NULL;
    size_t nvd = full ? sizeof view_dtypes / sizeof view_dtypes[0] : 1;
    /* trn1 / trn3 and the large shapes: TPB_ORACLE_FULL only */
    size_t ntargets = full ? sizeof targets / sizeof targets[0] : 1;
    size_t nbig = full ? sizeof big_shapes / sizeof big_shapes[0] : 0;
    size_t ndt = full ? sizeof dtypes / sizeof dtypes[0] : 4;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/oracle-sweep.%d", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (int)getpid());
    static char tmpl[40000], text[40000], body[16384];
    unsigned counts[5] = { 0 }, findings = 0;
    for (size_t t = 0; t < sizeof tmpls / sizeof tmpls[0]; t++) {
        if (only && strncmp(tmpls[t].name, only, strlen(only)))
            continue;
        unsigned per[5] = { 0 };
        /* a heavy template (spill.*: 9 x 28 KiB live tiles) runs in the
         * base pass only */
        bool base_only = !strncmp(tmpls[t].name, "spill.", 6);
        for (size_t ti = 0; ti < (base_only ? 1 : ntargets); ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < (ti ? nvd
                                         : ndt); di++)
                for (int b = 0; b < (tmpls[t].psum ? 2 : 1); b++) {
                    vars_t v = { shapes[si], ti ? view_dtypes[di] : dtypes[di],
                                 b ? "psum" : "sbuf", 0, 0, 0, targets[ti], "" };
                    shape_dims(v.S, &v.P, &v.F, &v.G1);
                    snprintf(tmpl, sizeof tmpl, "%s%s]}", HDR, tmpls[t].body);
                    expand(tmpl, &v, text, sizeof text);
                    tpb_err_t err;
                    orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                    20000, dir, 2000000, &err);
                    counts[r]++;
                    per[r]++;
                    if (dump && (r == ORC_RUN_ERROR || (r == ORC_OK && per[r] <= 8)))
                        dump_seed(dump, tmpls[t].name, per[r], text);
                    if (r == ORC_FIELD_ERROR)
                        findings++;
                    if (verbose || r == ORC_FIELD_ERROR)
                        printf("%-12s %-26s %-12s %-9s %-4s %s %s\n", orc_result_name(r),
                               tmpls[t].name, v.S, v.D, v.B, v.T,
                               r == ORC_OK ? "" : err.msg);
                }
        for (size_t si = 0; !base_only && si < nbig; si++)
            for (size_t di = 0; di < nvd; di++)
                for (int b = 0; b < (tmpls[t].psum ? 2 : 1); b++) {
                    vars_t v = { big_shapes[si], view_dtypes[di], b ? "psum" : "sbuf", 0, 0, 0,
                                 "trn2", "" };
                    shape_dims(v.S, &v.P, &v.F, &v.G1);
                    snprintf(tmpl, sizeof tmpl, "%s%s]}", HDR, tmpls[t].body);
                    expand(tmpl, &v, text, sizeof text);
                    tpb_err_t err;
                    orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                    20000, dir, 2000000, &err);
                    counts[r]++;
                    per[r]++;
                    if (r == ORC_FIELD_ERROR)
                        findings++;
                    if (verbose || r == ORC_FIELD_ERROR)
                        printf("%-12s %-26s %-12s %-9s %-4s %s\n", orc_result_name(r),
                               tmpls[t].name, v.S, v.D, v.B, r == ORC_OK ? "" : err.msg);
                }
        /* the whole body in a loop of 24 iterations, rolled (one body, register
         * addresses, a back branch: docs/compiler.md "Rolled loops") */
        for (size_t si = 0; !base_only && si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < nvd; di++)
                for (int b = 0; b < 2; b++) {
                    vars_t v = { shapes[si], view_dtypes[di], "sbuf", 0, 0, 0,
                                 "trn2", "" };
                    shape_dims(v.S, &v.P, &v.F, &v.G1);
                    /* b = 0: the loads of x and y inside the loop; b = 1: before it,
                     * so only iteration 0 waits for them */
                    if (b)
                        snprintf(tmpl, sizeof tmpl, HDR_DECL HDR_LOADS "{'op':'for','var':'i',"
                                 "'range':[24],'roll':true,'body':[%s]}]}", tmpls[t].body);
                    else
                        snprintf(tmpl, sizeof tmpl, HDR_DECL "{'op':'for','var':'i','range':[24],"
                                 "'roll':true,'body':[" HDR_LOADS "%s]}]}", tmpls[t].body);
                    expand(tmpl, &v, text, sizeof text);
                    tpb_err_t err;
                    orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                    20000, dir, 2000000, &err);
                    counts[r]++;
                    per[r]++;
                    if (r == ORC_FIELD_ERROR)
                        findings++;
                    if (verbose || r == ORC_FIELD_ERROR)
                        printf("%-12s %-26s %-12s %-9s rolled, loads %s %s\n", orc_result_name(r),
                               tmpls[t].name, v.S, v.D, b ? "before" : "inside",
                               r == ORC_OK ? "" : err.msg);
                }
        /* an SBUF of 128 bytes per partition (--sbuf-limit): the allocator
         * spills (docs/compiler.md "SBUF spilling") */
        for (size_t si = 0; !base_only && si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < nvd; di++) {
                vars_t v = { shapes[si], view_dtypes[di], "sbuf", 0, 0, 0, "trn2", "" };
                shape_dims(v.S, &v.P, &v.F, &v.G1);
                snprintf(tmpl, sizeof tmpl, "%s%s]}", HDR, tmpls[t].body);
                expand(tmpl, &v, text, sizeof text);
                enc_options_t eo;
                memset(&eo, 0, sizeof eo);
                eo.sbuf_limit = 128;
                tpb_err_t err;
                orc_result_t r = orc_check_text_opts(text, strlen(text), "k.json", "/nonexistent",
                                                     20000, dir, 2000000, &eo, &err);
                counts[r]++;
                per[r]++;
                if (r == ORC_FIELD_ERROR)
                    findings++;
                if (verbose || r == ORC_FIELD_ERROR)
                    printf("%-12s %-26s %-12s %-9s sbuf-limit %s\n", orc_result_name(r),
                           tmpls[t].name, v.S, v.D, r == ORC_OK ? "" : err.msg);
            }
        /* the body in a dynamic_range whose count (3) a register holds at
         * run time (docs/compiler.md "Dynamic loops") */
        for (size_t si = 0; !base_only && si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < nvd; di++) {
                vars_t v = { shapes[si], view_dtypes[di], "sbuf", 0, 0, 0, "trn2", "" };
                shape_dims(v.S, &v.P, &v.F, &v.G1);
                snprintf(tmpl, sizeof tmpl, HDR_DECL "{'op':'register_alloc','reg':'n','x':0},"
                         "{'op':'tile','name':'cnt','shape':[1,1],'dtype':'int32'},"
                         "{'op':'memset','dst':'cnt','value':3},"
                         "{'op':'register_load','dst':'n','src':'cnt[0, 0]'},"
                         "{'op':'dynamic_range','var':'i','range':[0,'n',1],'body':["
                         HDR_LOADS "%s]}]}", tmpls[t].body);
                expand(tmpl, &v, text, sizeof text);
                tpb_err_t err;
                orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                20000, dir, 2000000, &err);
                counts[r]++;
                per[r]++;
                if (r == ORC_FIELD_ERROR)
                    findings++;
                if (verbose || r == ORC_FIELD_ERROR)
                    printf("%-12s %-26s %-12s %-9s dynamic %s\n", orc_result_name(r),
                           tmpls[t].name, v.S, v.D, r == ORC_OK ? "" : err.msg);
            }
        for (size_t si = 0; !base_only && si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < nvd; di++)
                for (int b = 0; b < (tmpls[t].psum ? 2 : 1); b++) {
                    vars_t v = { shapes[si], view_dtypes[di], b ? "psum" : "sbuf", 0, 0, 0,
                                 "trn2", "" };
                    shape_dims(v.S, &v.P, &v.F, &v.G1);
                    mask_pattern(&v);
                    if (!add_mask(tmpls[t].name, tmpls[t].body, body, sizeof body))
                        continue;
                    snprintf(tmpl, sizeof tmpl, "%s%s]}", HDR, body);
                    expand(tmpl, &v, text, sizeof text);
                    tpb_err_t err;
                    orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                    20000, dir, 2000000, &err);
                    counts[r]++;
                    per[r]++;
                    if (r == ORC_FIELD_ERROR)
                        findings++;
                    if (verbose || r == ORC_FIELD_ERROR)
                        printf("%-12s %-26s %-12s %-9s %-4s mask %s\n", orc_result_name(r),
                               tmpls[t].name, v.S, v.D, v.B, r == ORC_OK ? "" : err.msg);
                }
        for (size_t si = 0; !base_only && si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t vi = 0; vi < sizeof views / sizeof views[0]; vi++)
                for (size_t di = 0; di < nvd; di++)
                    for (int b = 0; b < (tmpls[t].psum ? 2 : 1); b++) {
                        vars_t v = { shapes[si], view_dtypes[di], b ? "psum" : "sbuf", 0, 0, 0, "trn2", "" };
                        shape_dims(v.S, &v.P, &v.F, &v.G1);
                        if (v.P != 128)
                            continue;
                        snprintf(tmpl, sizeof tmpl, "%s", tmpls[t].body);
                        expand(tmpl, &v, text, sizeof text);
                        apply_view(text, views[vi], body, sizeof body);
                        snprintf(tmpl, sizeof tmpl, "%s", HDR);
                        expand(tmpl, &v, text, sizeof text);
                        size_t hl = strlen(text), bl = strlen(body);
                        assert_true(hl + bl + 3 < sizeof text);
                        memcpy(text + hl, body, bl);
                        memcpy(text + hl + bl, "]}", 3);
                        tpb_err_t err;
                        orc_result_t r = orc_check_text(text, strlen(text), "k.json",
                                                        "/nonexistent", 20000, dir, 2000000, &err);
                        counts[r]++;
                        per[r]++;
                        if (r == ORC_FIELD_ERROR)
                            findings++;
                        if (verbose || r == ORC_FIELD_ERROR)
                            printf("%-12s %-26s %-12s %-9s %-4s %s %s\n", orc_result_name(r),
                                   tmpls[t].name, v.S, v.D, v.B, views[vi],
                                   r == ORC_OK ? "" : err.msg);
                    }
        if (verbose || !per[ORC_OK])
            printf("  %-26s ok %u, compile errors %u, run errors %u, field errors %u\n",
                   tmpls[t].name, per[ORC_OK], per[ORC_COMPILE_ERROR], per[ORC_RUN_ERROR],
                   per[ORC_FIELD_ERROR]);
    }
    /* the multi-core templates: trn2, base shapes, ndt dtypes */
    for (size_t t = 0; t < sizeof mc_tmpls / sizeof mc_tmpls[0]; t++) {
        if (only && strncmp(mc_tmpls[t].name, only, strlen(only)))
            continue;
        unsigned per[5] = { 0 };
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t di = 0; di < ndt; di++) {
                vars_t v = { shapes[si], dtypes[di], "sbuf", 0, 0, 0, "trn2", "" };
                shape_dims(v.S, &v.P, &v.F, &v.G1);
                snprintf(tmpl, sizeof tmpl, "{'grid':['nc(2)'],%s%s]}", HDR + 1, mc_tmpls[t].body);
                expand(tmpl, &v, text, sizeof text);
                tpb_err_t err;
                orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent",
                                                20000, dir, 2000000, &err);
                counts[r]++;
                per[r]++;
                if (r == ORC_FIELD_ERROR)
                    findings++;
                if (dump && (r == ORC_RUN_ERROR || (r == ORC_OK && per[r] <= 8)))
                    dump_seed(dump, mc_tmpls[t].name, per[r], text);
                if (verbose || r == ORC_FIELD_ERROR)
                    printf("%-12s %-26s %-12s %-9s nc(2) %s\n", orc_result_name(r),
                           mc_tmpls[t].name, v.S, v.D, r == ORC_OK ? "" : err.msg);
            }
        if (verbose || !per[ORC_OK])
            printf("  %-26s ok %u, compile errors %u, run errors %u, field errors %u\n",
                   mc_tmpls[t].name, per[ORC_OK], per[ORC_COMPILE_ERROR], per[ORC_RUN_ERROR],
                   per[ORC_FIELD_ERROR]);
    }
    printf("sweep: %u kernels ran, %u refused by the compiler, %u run errors, %u field "
           "errors\n", counts[ORC_OK], counts[ORC_COMPILE_ERROR], counts[ORC_RUN_ERROR],
           counts[ORC_FIELD_ERROR]);
    assert_int_equal(findings, 0);
}

/* A kernel of the sweep's header (shape S, dtype D) with body, which the
 * compiler must refuse with a message holding each of want (NULL-ended). */
static void expect_refused(const char *S, const char *D, const char *body, const char *const *want)
{
    static char tmpl[40000], text[40000];
    vars_t v = { S, D, "sbuf", 0, 0, 0, "trn2", "" };
    shape_dims(v.S, &v.P, &v.F, &v.G1);
    snprintf(tmpl, sizeof tmpl, "%s%s]}", HDR, body);
    expand(tmpl, &v, text, sizeof text);
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/oracle-found.%d", (int)getpid());
    tpb_err_t err;
    orc_result_t r = orc_check_text(text, strlen(text), "k.json", "/nonexistent", 20000, dir,
                                    2000000, &err);
    if (r != ORC_COMPILE_ERROR)
        fail_msg("%s %s: %s (%s), expected a compile error", S, D, orc_result_name(r), err.msg);
    for (int i = 0; want[i]; i++)
        if (!strstr(err.msg, want[i]))
            fail_msg("'%s' not in: %s", want[i], err.msg);
}

/* Found by the sweep: local_gather on fewer than 16 partitions (one
 * partition: [1, 1], [1, 9]) compiled to an IndirectCopy the simulator
 * refused ("works on whole 16-partition Pool cores"); NKI: src_buffer's
 * partition size is a multiple of 16. */
static void test_found_local_gather_partitions(void **state)
{
    (void)state;
    static const char *const want[] = { "local_gather", "'index'", "multiple of 16", NULL };
    static const char *const S[] = { "[1, 1]", "[1, 9]", "[8, 2]", "[24, 1]" };
    for (int i = 0; i < 4; i++)
        expect_refused(S[i], "float32",
                       "{'op':'tile','name':'lg','shape':[$P,$G],'dtype':'$D'},{'op':'tile','name':'ix',"
                       "'shape':$S,'dtype':'uint16'},{'op':'memset','dst':'ix','value':0},{'op':'local_gather',"
                       "'dst':'lg','src_buffer':'x','index':'ix','num_elem_per_idx':1}",
                       want);
}

/* Found by the sweep: quantize_mx's flat form (fp8 dst) with a free size
 * not a multiple of 32, or a scale not one per 32 elements, compiled to a
 * QuantizeMX the simulator refused ("scale: expected 1 partitions x 0
 * scales"). */
static void test_found_quantize_mx_blocks(void **state)
{
    (void)state;
    static const char *const want_src[] = { "quantize_mx", "'src'", "multiple of 32", NULL };
    expect_refused("[1, 9]", "bfloat16",
                   "{'op':'tile','name':'q','shape':[$P,$F],'dtype':'float8_e4m3fn'},{'op':'tile','name':"
                   "'qs','shape':[$P,1],'dtype':'uint8'},{'op':'quantize_mx','dst':'q','src':'x','scale':'qs'}",
                   want_src);
    static const char *const want_scale[] = { "quantize_mx", "'scale'", "must be [128, 2]", NULL };
    expect_refused("[128, 64]", "bfloat16",
                   "{'op':'tile','name':'q','shape':[$P,$F],'dtype':'float8_e4m3fn'},{'op':'tile','name':"
                   "'qs','shape':[$P,1],'dtype':'uint8'},{'op':'quantize_mx','dst':'q','src':'x','scale':'qs'}",
                   want_scale);
}

/* Found by the sweep's rolled pass: a loop with "roll": true whose first
 * iteration has a DMA where the second has another instruction (x and y
 * are loaded once, before the loop, so only iteration 0 waits on them)
 * crashed `tpb compile` (roll.c congruent read the other instruction's
 * DMA fields, a NULL pointer); now the loop is refused with the reason. */
static void test_found_roll_dma_vs_other(void **state)
{
    (void)state;
    static const char *const want[] = { "\"roll\": true", "cannot be rolled", NULL };
    expect_refused("[1, 1]", "float32",
                   "{'op':'for','var':'i','range':[3],'roll':true,'body':[" Z
                   "{'op':'tensor_copy','dst':'z','src':'x','engine':'dve'}," STZ "]}",
                   want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_local_gather_partitions),
        cmocka_unit_test(test_found_quantize_mx_blocks),
        cmocka_unit_test(test_found_roll_dma_vs_other),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
