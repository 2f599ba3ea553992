# Test labels. Every test is labelled `fast` unless it opts out by carrying `slow` or `long`:
#   fast  the default; `ctest -L fast` is what CI runs under the asan preset (docs/reliability.md),
#         so a fast test must finish in seconds (a few tens under AddressSanitizer).
#   slow  opt-out: seconds in the release build but minutes under the sanitizers. CI runs it in
#         the release stage only (the README's test command).
#   long  opt-out: minutes or more in any build (10^7-cycle RTL run). Not run by CI: the
#         README's test command uses `-LE long`; run them with `ctest -L long`.
# Other labels (rtl, cosim, fuzz, ...) name an area and combine with these. Nothing needs to be
# done for a new test to get `fast`: add_test() below labels the tests of a directory when that
# directory ends, and gtest_discover_tests() below labels the cases it discovers. A test target that only long tests
# use says so with set_target_properties(T PROPERTIES KVTIER_LONG_ONLY TRUE), so that the
# `fast_tests` target (what `ctest -L fast` needs built) leaves it out.

# Both wrappers below pass their arguments on one by one as bracket arguments, so that empty
# ones and ones holding ';' arrive intact.

# gtest_discover_tests(), with `fast` added to the labels of every discovered case unless its
# PROPERTIES' LABELS hold slow or long. The cases are known only at test time, so the labels
# are set by a CTest include file that runs after the discovered cases are added. This file is
# included after GoogleTest, whose gtest_discover_tests() CMake then keeps as
# _gtest_discover_tests.
function(gtest_discover_tests target)
  set(code "")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 0 ${last})
    string(APPEND code " [==[${ARGV${i}}]==]")
  endforeach()
  cmake_language(EVAL CODE "_gtest_discover_tests(${code})")
  cmake_parse_arguments(PARSE_ARGV 1 kvtier_gtest "" "TEST_LIST" "PROPERTIES")
  set(list_var ${target}_TESTS)
  if(kvtier_gtest_TEST_LIST)
    set(list_var ${kvtier_gtest_TEST_LIST})
  endif()
  set(labels)
  list(FIND kvtier_gtest_PROPERTIES LABELS at)
  if(NOT at EQUAL -1)
    math(EXPR at "${at} + 1")
    list(GET kvtier_gtest_PROPERTIES ${at} labels)
  endif()
  if(NOT "long" IN_LIST labels AND NOT "slow" IN_LIST labels)
    list(APPEND labels fast)
  endif()
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${script}
    "foreach(t IN LISTS ${list_var})\n"
    "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${labels}\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

# add_test(), unchanged, plus: at the end of the directory that adds tests, every test there
# that carries none of `fast`, `slow` and `long` gets `fast` added to its labels.
function(add_test)
  set(code "")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 0 ${last})
    string(APPEND code " [==[${ARGV${i}}]==]")
  endforeach()
  cmake_language(EVAL CODE "_add_test(${code})")
  get_property(hooked DIRECTORY PROPERTY KVTIER_DEFAULT_LABEL_HOOKED)
  if(NOT hooked)
    set_property(DIRECTORY PROPERTY KVTIER_DEFAULT_LABEL_HOOKED TRUE)
    cmake_language(DEFER CALL kvtier_apply_default_label)
  endif()
endfunction()

function(kvtier_apply_default_label)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} LABELS labels)
    if(NOT labels)
      set(labels)
    endif()
    if(NOT "long" IN_LIST labels AND NOT "slow" IN_LIST labels AND NOT "fast" IN_LIST labels)
      list(APPEND labels fast)
      set_tests_properties(${t} PROPERTIES LABELS "${labels}")
    endif()
  endforeach()
endfunction()

# The `fast_tests` target (call kvtier_fast_tests_target() once every test directory is added):
# every executable built under tests/ that a fast test may run (all but those marked
# KVTIER_LONG_ONLY), plus the kvtier command.
function(kvtier_fast_test_targets dir out)
  set(found ${${out}})
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(long_only ${t} KVTIER_LONG_ONLY)
    if(type STREQUAL "EXECUTABLE" AND NOT long_only)
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(s IN LISTS subdirs)
    kvtier_fast_test_targets(${s} found)
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
function(kvtier_fast_tests_target)
  set(targets kvtier)
  kvtier_fast_test_targets(${PROJECT_SOURCE_DIR}/tests targets)
  add_custom_target(fast_tests)
  add_dependencies(fast_tests ${targets})
endfunction()
