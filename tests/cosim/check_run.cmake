# Runs one command and checks both its exit status and its output, so that a test which
# matches output can never pass a run that failed (CTest ignores the exit status as soon as
# PASS_REGULAR_EXPRESSION is set).
#
#   -DCOMMAND=<program and arguments, separated by "@@">
#   -DEXIT=<expected exit status; any other status, a signal or a crash fails>
#   -DMATCH=<regular expressions separated by "@@": every one must occur in the output>
#   -DNO_MATCH=<regular expressions separated by "@@": none may occur>
#   -DOUTPUT_FILE=<optional: also write the combined output there>
if(NOT DEFINED COMMAND OR NOT DEFINED EXIT)
  message(FATAL_ERROR "check_run.cmake needs -DCOMMAND and -DEXIT")
endif()
string(REPLACE "@@" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(DEFINED OUTPUT_FILE AND NOT OUTPUT_FILE STREQUAL "")
  file(WRITE "${OUTPUT_FILE}" "${all}")
endif()
set(failed "")
if(NOT "${rc}" STREQUAL "${EXIT}")
  string(APPEND failed "exit status '${rc}', expected ${EXIT}\n")
endif()
if(DEFINED MATCH AND NOT MATCH STREQUAL "")
  string(REPLACE "@@" ";" patterns "${MATCH}")
  foreach(p IN LISTS patterns)
    if(NOT all MATCHES "${p}")
      string(APPEND failed "output lacks /${p}/\n")
    endif()
  endforeach()
endif()
if(DEFINED NO_MATCH AND NOT NO_MATCH STREQUAL "")
  string(REPLACE "@@" ";" patterns "${NO_MATCH}")
  foreach(p IN LISTS patterns)
    if(all MATCHES "${p}")
      string(APPEND failed "output contains /${p}/: '${CMAKE_MATCH_0}'\n")
    endif()
  endforeach()
endif()
if(NOT failed STREQUAL "")
  message(FATAL_ERROR "check failed for: ${command}\n${failed}")
endif()
