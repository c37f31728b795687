# Seed error messages reached from kernel files (docs/seed-coverage.md):
# each kernel in tests/seed-kernels/ must fail to compile with the reference
# notes' message, verbatim.
set(TPB_SEED_KERNELS
  "both_indirect|``src`` and ``dst`` operands cannot both be indirect memory accesses"
  "rmw_dynamic_dma|IndirectRMW does not support dynamic DMA mode"
  "strided_load|Cannot legalize strided load!"
  "strided_store|Cannot legalize strided store!"
  "tsc_needs_op1|LOGIC FAULT, TSC mode must have op1 set!"
  "double_row_step|incorrect double row step"
  "matmul_access_pattern|Incorrect access pattern! moving: free step 40000 does not fit the 16-bit step field"
  "mx_scale_ptr|Scale should be 1.0 if scale_ptr is specified"
)
foreach(entry ${TPB_SEED_KERNELS})
  string(FIND "${entry}" "|" bar)
  string(SUBSTRING "${entry}" 0 ${bar} name)
  math(EXPR rest "${bar} + 1")
  string(SUBSTRING "${entry}" ${rest} -1 regex)
  add_test(NAME seed_message_${name}
           COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/tests/seed-kernels/${name}.json
                   -o ${PROJECT_BINARY_DIR}/seed_message_${name})
  set_tests_properties(seed_message_${name} PROPERTIES LABELS "quick;back"
                       PASS_REGULAR_EXPRESSION "${regex}")
endforeach()

# dge_mode hw on an indirect DMA reaches the dynamic (DGE vector-indirect)
# mode on trn2 (dge_on_vector_indirect_dma): the descriptor keeps dge=hw and
# OOB becomes skip (seed 002's is_offset_dma / enable_dge_on_vector_indirect_dma fork).
add_test(NAME seed_gather_dynamic_mode
         COMMAND sh -c "set -e; \"$1\" compile \"$2\" -o \"$3\"; \"$1\" dis \"$3\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/gather_dynamic.json
                 ${PROJECT_BINARY_DIR}/seed_gather_dynamic)
set_tests_properties(seed_gather_dynamic_mode PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "PseudoDmaIndirect2d [^\n]* scatter=0 oob=skip compute=bypass dge=hw")

# Explicit deps survive the multi-core split: on core 1 the load (which
# touches nothing the memset writes) waits for the DVE memset it names.
add_test(NAME seed_deps_multicore
         COMMAND sh -c "set -e; \"$1\" compile \"$2\" -o \"$3\"; \"$1\" dis \"$3/nc1/sg0/SP.bin\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/deps_multicore.json
                 ${PROJECT_BINARY_DIR}/seed_deps_multicore)
set_tests_properties(seed_deps_multicore PROPERTIES LABELS "quick;back;multicore"
  PASS_REGULAR_EXPRESSION "DmaTrigger queue=0 ndesc=1 unique=0 transpose_op=none oob=error src_bound=0 dst_bound=0 src_lo=0 src_hi=0 dst_lo=0 dst_hi=0 wait=S3>=1")

# enableLDWOpt end to end: with --enable-ldw-opt the repeated stationary is
# loaded once, and the simulated output is bit-identical to the plain compile.
add_test(NAME seed_ldw_opt_same_values
         COMMAND sh -c "set -e; d=\"$3\"; rm -rf \"$d\"; mkdir -p \"$d/in\";
                        /usr/bin/python3 -c \"import numpy as np; r=np.random.default_rng(1); np.save('$d/in/w.npy', r.standard_normal((128, 64)).astype(np.float32)); np.save('$d/in/x.npy', r.standard_normal((128, 1024)).astype(np.float32))\";
                        \"$1\" compile \"$2\" -o \"$d/a\"; \"$1\" compile \"$2\" -o \"$d/b\" --enable-ldw-opt --stats | grep -q 'LdWeights  *0x01 1';
                        \"$1\" sim \"$d/a\" --inputs \"$d/in\" -o \"$d/ra\" -q; \"$1\" sim \"$d/b\" --inputs \"$d/in\" -o \"$d/rb\" -q;
                        cmp \"$d/ra/out.npy\" \"$d/rb/out.npy\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/ldw_reuse.json
                 ${PROJECT_BINARY_DIR}/seed_ldw_opt)
set_tests_properties(seed_ldw_opt_same_values PROPERTIES LABELS "quick;back")

# docs/seed-coverage.md stays consistent: summary = rows, and every test a
# DONE row names exists.
add_test(NAME seed_coverage_doc
         COMMAND sh -c "cd \"$1\" && ctest -N | awk '{print $3}' > seed_coverage_ctests.txt && /usr/bin/python3 \"$2/scripts/seed_coverage_check.py\" \"$2/docs/seed-coverage.md\" seed_coverage_ctests.txt \"$2/tests\"" sh
                 ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(seed_coverage_doc PROPERTIES LABELS "quick")

# Explicit deps stay on their ops when the compiler inserts the shared
# identity load at the kernel front: the load waits for the Pool memset.
add_test(NAME seed_deps_identity_shift
         COMMAND sh -c "set -e; \"$1\" compile \"$2\" -o \"$3\"; \"$1\" dis \"$3\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/deps_identity.json
                 ${PROJECT_BINARY_DIR}/seed_deps_identity)
set_tests_properties(seed_deps_identity_shift PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "load_1  body\\[5\\]\n +3  0000c0:  DmaTrigger queue=1 ndesc=1 unique=0 transpose_op=none oob=error src_bound=0 dst_bound=0 src_lo=0 src_hi=0 dst_lo=0 dst_hi=0 wait=S2>=1")

# unique_indices on a scatter-add (seed 002): the promise rides on the
# DmaTrigger (unique=1) and the simulator refuses a transfer whose indices
# repeat (golden scatter_add_unique is the passing case).
add_test(NAME seed_unique_indices_repeat
         COMMAND sh -c "set -e; d=\"$3\"; rm -rf \"$d\"; mkdir -p \"$d/in\";
                        /usr/bin/python3 -c \"import numpy as np; np.save('$d/in/base.npy', np.zeros((128, 16), np.float32)); np.save('$d/in/upd.npy', np.ones((64, 16), np.float32)); i = np.arange(64, dtype=np.int32).reshape(64, 1); i[40] = 7; np.save('$d/in/idx.npy', i)\";
                        \"$1\" compile \"$2\" -o \"$d/a\"; \"$1\" dis \"$d/a\" | grep -q 'DmaTrigger .*unique=1';
                        ! \"$1\" sim \"$d/a\" --inputs \"$d/in\" -o \"$d/r\" -q 2>&1" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/golden/scatter_add_unique/kernel.json
                 ${PROJECT_BINARY_DIR}/seed_unique_indices)
set_tests_properties(seed_unique_indices_repeat PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "unique_indices: destination row at 0x[0-9a-f]+ is scattered to twice \\(idx element 7 of descriptor 0 and element 40 of descriptor 0\\)")

# matmul_mx scale_ptr from a kernel file: the MatmulMX carries the output
# scale as a pointer (seed 001 MX scale / scale_ptr; values: test_ops_pe
# test_mx_out_scale).
add_test(NAME seed_mx_scale_ptr_lowered
         COMMAND sh -c "set -e; \"$1\" compile \"$2\" -o \"$3\"; \"$1\" dis \"$3\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/mx_scale_ptr_ok.json
                 ${PROJECT_BINARY_DIR}/seed_mx_scale_ptr)
set_tests_properties(seed_mx_scale_ptr_lowered PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "MatmulMX [^\n]* accumulate=0 out_scale_en=1 out_scale_is_ptr=1 out_scale=0x1")

# device_print (seed 002 codegenNeuronPrintInst): tpb sim prints each debug
# buffer with its prefix; the values are golden device_print's stored input
# (rows 0..1 of 2x after the tensor_scalar).
add_test(NAME seed_device_print
         COMMAND sh -c "set -e; \"$1\" compile \"$2/kernel.json\" -o \"$3\"; \"$1\" sim \"$3\" --inputs \"$2/inputs\" -o \"$3/out\"" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/golden/device_print
                 ${PROJECT_BINARY_DIR}/seed_device_print)
set_tests_properties(seed_device_print PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "device_print loaded x \\(print_loaded_x \\[4, 8\\] float32\\): 35 13 1 -24 [^\n]*\ndevice_print doubled \\(print_doubled \\[2, 8\\] float32\\): 70 26 2 -48 -40 -92 -86 -98 -66 62 28 82 0 20 94 44\n")

# Hardware DGE is timed (docs/timing.md; hardware-facts §1.5: 2 instances
# per NC, ~600 ns per DGE DMA instruction): 16 back-to-back dge_mode hw
# loads need 8 x 600 ns of DGE time, so they finish at least 2 us (2400
# cycles at 1.2 GHz) after the same loads with dge_mode none, whose fixed
# latencies overlap.
add_test(NAME seed_dge_hw_timed
         COMMAND sh -c "set -e; d=\"$3\"; rm -rf \"$d\"; mkdir -p \"$d/in\";
                        /usr/bin/python3 -c \"import numpy as np; np.save('$d/in/x.npy', np.ones((128, 16), np.float32))\";
                        sed 's/\"hw\"/\"none\"/' \"$2\" > \"$d/none.json\";
                        \"$1\" compile \"$2\" -o \"$d/hw\"; \"$1\" compile \"$d/none.json\" -o \"$d/none\";
                        hw=$(\"$1\" sim \"$d/hw\" --inputs \"$d/in\" | sed -n 's/^total: \\([0-9]*\\) cycles.*/\\1/p');
                        none=$(\"$1\" sim \"$d/none\" --inputs \"$d/in\" | sed -n 's/^total: \\([0-9]*\\) cycles.*/\\1/p');
                        echo \"hw $hw none $none\"; test $((hw - none)) -ge 2400" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/tests/seed-kernels/dge_hw_loads.json
                 ${PROJECT_BINARY_DIR}/seed_dge_hw)
set_tests_properties(seed_dge_hw_timed PROPERTIES LABELS "quick;back")

# seed 002 §6: collective DMAs carry their replica groups and read only the
# group peer's SBUF (the SB<->SB collective AP); values: golden mc_rank_groups_4
add_test(NAME seed_cc_replica_groups
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/check_cc_ap.py
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/golden/mc_rank_groups_4/kernel.json
                 ${PROJECT_BINARY_DIR}/seed_cc_ap)
set_tests_properties(seed_cc_replica_groups PROPERTIES LABELS "quick;back")

# seed 001 §5.1 (codegenLocalReduceOp): the accumulating pulls of an HBM
# all_reduce / reduce_scatter are Reduce (38) instructions (op add, kind,
# local, replica groups) lowered to DMA-add descriptors; values: golden
# mc_all_reduce_hbm_4
add_test(NAME seed_local_reduce
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/check_local_reduce.py
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/golden/mc_all_reduce_hbm_4/kernel.json
                 ${PROJECT_BINARY_DIR}/seed_local_reduce 4)
set_tests_properties(seed_local_reduce PROPERTIES LABELS "quick;back")
