# cmake -P script: a collective with a missing participant deadlocks and the
# simulator names the blocked instruction of every core (never hangs).
# Compile golden/mc_all_reduce_2_add, drop the remote semaphore update of
# core 1's "ready" signal to core 0 (core 1 never tells core 0 that its
# source is ready), run, expect the report.
# Variables: TPB (tpb binary), SRC (source root), OUT (scratch directory).
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${TPB} compile ${SRC}/golden/mc_all_reduce_2_add/kernel.json -o ${OUT}/art
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "compile failed")
endif()
execute_process(COMMAND ${TPB} dis --canonical ${OUT}/art/nc1/sg0/Pool.bin
                OUTPUT_VARIABLE text RESULT_VARIABLE rc)
string(REGEX REPLACE "(all_reduce_1.ready0[^\n]*\nNop[^\n]*) upd=nc0:S[0-9]+.sem_inc\\(1\\)@complete"
       "\\1" edited "${text}")
if(rc OR edited STREQUAL text)
  message(FATAL_ERROR "no ready signal found on core 1:\n${text}")
endif()
file(WRITE ${OUT}/pool1.s "${edited}")
execute_process(COMMAND ${TPB} as ${OUT}/pool1.s -o ${OUT}/art/nc1/sg0/Pool.bin RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "assemble failed")
endif()
execute_process(COMMAND ${TPB} sim ${OUT}/art --inputs ${SRC}/golden/mc_all_reduce_2_add/inputs
                        -o ${OUT}/out -q
                RESULT_VARIABLE rc ERROR_VARIABLE msg TIMEOUT 60)
message("${msg}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit status 1 (deadlock), got ${rc}")
endif()
foreach(want "deadlock at cycle"
        "core 0 SP instruction [0-9]+ \\(pc [0-9]+\\) Nop \\[i0:all_reduce_1.wait1 body\\[3\\]\\]: waits for S[0-9]+ CollReady\\+1 >= 1 \\(value 0, last updated by nobody\\)"
        "core 1 Pool instruction [0-9]+ \\(pc [0-9]+\\) Nop \\[i1:all_reduce_1.release body\\[3\\]\\]: waits for S[0-9]+ CollDone >= 1 \\(value 0")
  if(NOT msg MATCHES "${want}")
    message(FATAL_ERROR "report lacks: ${want}")
  endif()
endforeach()
