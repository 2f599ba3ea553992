# Functional coverage of the directed plus random suite: a random stream with back-pressure
# and the pinned preset's default workload's stream (the coverage build has its 16384 x 4 index), each with `kvtier cosim --coverage`, then the union of
# their bins (coverage_check.py): every bin covered, and the random run alone >= 90 %.
foreach(run "random@--platform@h200-cxl2-x16-pinned@--random@20000@--seed@1@--backpressure@0.3"
            "workload@--platform@h200-cxl2-x16-pinned@--workload@synthetic:document_share=0@--backpressure@0.2")
  string(REPLACE "@" ";" args "${run}")
  list(POP_FRONT args name)
  file(REMOVE_RECURSE ${OUT}/${name})
  execute_process(COMMAND ${KVTIER} cosim ${args} --coverage ${OUT}/${name} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR out MATCHES "MISMATCH|kvdp assertion")
    message(FATAL_ERROR "kvtier cosim ${args} --coverage failed (${rc}):\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${PYTHON} ${CHECK} --min-each 0.5 --min-union 1.0 ${OUT}/random ${OUT}/workload
                RESULT_VARIABLE rc)
execute_process(COMMAND ${PYTHON} ${CHECK} --min-each 0.9 ${OUT}/random RESULT_VARIABLE rc_random)
if(NOT rc EQUAL 0 OR NOT rc_random EQUAL 0)
  message(FATAL_ERROR "functional coverage goals not met")
endif()
