# Runs the default workload with the TLM data plane and with the RTL engine, then compares
# the two stats.json files (compare_stats.py). -DEXTRA=a=1,b=2: more --set overrides for
# both runs (another index geometry), separated by commas.
set(extra_sets)
string(REPLACE "," ";" extra "${EXTRA}")
foreach(kv ${extra})
  list(APPEND extra_sets --set ${kv})
endforeach()
foreach(impl tlm rtl)
  execute_process(COMMAND ${KVTIER} run --set ctrl.impl=${impl} ${extra_sets} --out ${OUT}/${impl}
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvtier run --set ctrl.impl=${impl} ${extra_sets} failed: ${rc}")
  endif()
endforeach()
execute_process(COMMAND ${PYTHON} ${COMPARE} ${OUT}/tlm/stats.json ${OUT}/rtl/stats.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "RTL and TLM runs differ")
endif()
