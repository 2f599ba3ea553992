# Runs the default workload with the TLM data plane and with the RTL engine, then compares
# the two stats.json files (compare_stats.py).
foreach(impl tlm rtl)
  execute_process(COMMAND ${KVTIER} run --set ctrl.impl=${impl} --out ${OUT}/${impl}
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvtier run --set ctrl.impl=${impl} failed: ${rc}")
  endif()
endforeach()
execute_process(COMMAND ${PYTHON} ${COMPARE} ${OUT}/tlm/stats.json ${OUT}/rtl/stats.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "RTL and TLM runs differ")
endif()
