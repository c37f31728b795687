# ISA tools: assembler, disassembler, golden encodings, tpb as/dis/isa.
tpb_add_test(test_isa_text "quick;unit" test_isa_text.c)
tpb_add_test(test_isa_golden "quick;unit;golden" test_isa_golden.c)
tpb_add_test(test_isa_planned "quick;unit" test_isa_planned.c)

# docs/isa.md is generated from the table and must not drift from it.
add_test(NAME isa_docs_uptodate
         COMMAND sh -c "\"$1\" isa --markdown | diff -u \"$2\" -" sh
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/docs/isa.md)
set_tests_properties(isa_docs_uptodate PROPERTIES LABELS "quick")

# Every example assembles, and its canonical disassembly re-assembles to the
# same bytes.
file(GLOB TPB_ASM_EXAMPLES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/asm/*.s)
foreach(src ${TPB_ASM_EXAMPLES})
  get_filename_component(base ${src} NAME_WE)
  add_test(NAME isa_example_roundtrip_${base}
           COMMAND sh -c "set -e; d=\$(mktemp -d); trap 'rm -rf \$d' EXIT;
                          \"$1\" as \"$2\" -o \$d/a.bin;
                          \"$1\" dis --canonical \$d/a.bin > \$d/a.s;
                          \"$1\" as \$d/a.s -o \$d/b.bin;
                          cmp \$d/a.bin \$d/b.bin;
                          \"$1\" dis \$d/a.bin > /dev/null" sh $<TARGET_FILE:tpb> ${src})
  set_tests_properties(isa_example_roundtrip_${base} PROPERTIES LABELS "quick")
endforeach()

# CLI error paths: exit codes and messages.
add_test(NAME isa_cli_as_help COMMAND tpb as --help)
add_test(NAME isa_cli_dis_help COMMAND tpb dis --help)
add_test(NAME isa_cli_isa_help COMMAND tpb isa --help)
add_test(NAME isa_cli_as_unknown_option COMMAND tpb as --bogus)
set_tests_properties(isa_cli_as_unknown_option PROPERTIES WILL_FAIL TRUE)
add_test(NAME isa_cli_dis_unknown_option COMMAND tpb dis --bogus x.bin)
set_tests_properties(isa_cli_dis_unknown_option PROPERTIES WILL_FAIL TRUE)
# a bad line: file:line:col: error naming the field, non-zero exit, no output left behind
add_test(NAME isa_cli_as_error
         COMMAND sh -c "d=\$(mktemp -d); trap 'rm -rf \$d' EXIT;
                        printf 'Nop\\nTensorTensor op=plus\\n' > \$d/bad.s;
                        if \"$1\" as \$d/bad.s -o \$d/out.bin 2> \$d/err; then exit 1; fi;
                        cat \$d/err; test ! -e \$d/out.bin;
                        grep -q 'bad.s:2:17: error: field .op.: unknown ALU .plus.' \$d/err" sh $<TARGET_FILE:tpb>)
set_tests_properties(isa_cli_as_error PROPERTIES LABELS "quick")
# a truncated stream: trailing bytes reported with file and offset, non-zero exit
add_test(NAME isa_cli_dis_trailing
         COMMAND sh -c "d=\$(mktemp -d); trap 'rm -rf \$d' EXIT;
                        printf 'Halt\\n' > \$d/h.s; \"$1\" as \$d/h.s -o \$d/h.bin || exit 1;
                        printf 'abc' >> \$d/h.bin;
                        if \"$1\" dis \$d/h.bin > \$d/out 2> \$d/err; then exit 1; fi;
                        cat \$d/out \$d/err; grep -q Halt \$d/out &&
                        grep -q 'h.bin: offset 0x40: error: 3 trailing bytes' \$d/err" sh $<TARGET_FILE:tpb>)
set_tests_properties(isa_cli_dis_trailing PROPERTIES LABELS "quick")

# The golden bytes agree with the independent Python encoder (reads isa/*.def).
if(EXISTS /usr/bin/python3)
  add_test(NAME isa_golden_reference_encoder
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/encodings/mkgolden.py --check)
  set_tests_properties(isa_golden_reference_encoder PROPERTIES LABELS "quick;golden")
endif()

# tpb dis on an artifact directory: every nc*/sg*/<Engine>.bin under a header,
# legality checked against the engine named by the file.
add_test(NAME isa_cli_dis_artifact_dir
         COMMAND sh -c "set -e; d=\$(mktemp -d); trap 'rm -rf \$d' EXIT;
                        mkdir -p \$d/nc0/sg0 \$d/nc1/sg0;
                        \"$1\" as \"$2/examples/asm/matmul_SP.s\" -o \$d/nc0/sg0/SP.bin;
                        \"$1\" as \"$2/examples/asm/matmul_PE.s\" -o \$d/nc0/sg0/PE.bin;
                        \"$1\" as \"$2/examples/asm/tensor_add.s\" -o \$d/nc1/sg0/DVE.bin;
                        \"$1\" dis --no-hex \$d > \$d/out;
                        cat \$d/out;
                        grep -q '== .*nc0/sg0/PE.bin: 3 bundles, engine PE ==' \$d/out;
                        grep -q '== .*nc0/sg0/SP.bin: 7 bundles, engine SP ==' \$d/out;
                        grep -q '== .*nc1/sg0/DVE.bin: 5 bundles, engine DVE ==' \$d/out;
                        cp \$d/nc0/sg0/PE.bin \$d/nc1/sg0/DVE.bin;
                        if \"$1\" dis \$d > \$d/out2 2> \$d/err; then exit 1; fi;
                        grep -q 'LdWeights is not legal on engine DVE' \$d/out2" sh $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR})
set_tests_properties(isa_cli_dis_artifact_dir PROPERTIES LABELS "quick")

# Integration: the compiler's artifact disassembles cleanly (with the sidecar
# names) and every stream round-trips through tpb dis --canonical | tpb as.
add_test(NAME isa_dis_compiled_artifact
         COMMAND sh -c "set -e; d=\$(mktemp -d); trap 'rm -rf \$d' EXIT;
                        \"$1\" compile \"$2/examples/kernels/tensor_add.json\" -o \$d/art > /dev/null;
                        \"$1\" dis \$d/art > \$d/out;
                        grep -q 'semaphores: S0=PE' \$d/out; grep -q '# tensor_tensor' \$d/out;
                        for b in \$d/art/nc*/sg*/*.bin; do
                          \"$1\" dis --canonical \$b > \$d/x.s; \"$1\" as \$d/x.s -o \$d/x.bin; cmp \$b \$d/x.bin;
                        done" sh $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR})
set_tests_properties(isa_dis_compiled_artifact PROPERTIES LABELS "quick")

# Hand-written assembly kernels run in the simulator and match NumPy.
if(EXISTS /usr/bin/python3)
  foreach(k tensor_add matmul)
    add_test(NAME isa_asm_kernel_${k}
             COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/examples/asm/run.py ${k} --tpb $<TARGET_FILE:tpb>)
    set_tests_properties(isa_asm_kernel_${k} PROPERTIES LABELS "quick;golden" FAIL_REGULAR_EXPRESSION ": FAIL")
  endforeach()
endif()
