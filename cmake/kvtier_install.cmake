# `cmake --install build --prefix P` (docs/sweeps.md, "Installing"): the kvtier binary, the
# platform files, the plot script, the headers and the static libraries, with a CMake package
# so that an out-of-tree project can find_package(kvtier) and link kvtier::kvtier
# (examples/custom_policy). Included by the top-level CMakeLists.txt after every library.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KVTIER_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kvtier)
set(KVTIER_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/kvtier)
set(kvtier_libraries kvtier_workloads kvtier_tlm kvtier_cosim_engines kvtier_cosim kvtier_platform)

# The libraries name the source and build trees as include directories; installed, the
# headers are under include/kvtier with the same relative paths ("tlm/host/policy/policy.h").
foreach(t IN LISTS kvtier_libraries)
  get_target_property(dirs ${t} INTERFACE_INCLUDE_DIRECTORIES)
  set(wrapped "")
  foreach(d IN LISTS dirs)
    if(d)
      list(APPEND wrapped "$<BUILD_INTERFACE:${d}>")
    endif()
  endforeach()
  list(APPEND wrapped "$<INSTALL_INTERFACE:${KVTIER_INSTALL_INCLUDEDIR}>")
  set_target_properties(${t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
endforeach()

# kvtier::kvtier: everything a program that builds and runs the model needs.
add_library(kvtier_all INTERFACE)
target_link_libraries(kvtier_all INTERFACE kvtier_platform)
set_target_properties(kvtier_all PROPERTIES EXPORT_NAME kvtier)
add_library(kvtier::kvtier ALIAS kvtier_all)
# Exported names: kvtier::platform, kvtier::tlm, ... as inside this tree.
foreach(t IN LISTS kvtier_libraries)
  string(REPLACE "kvtier_" "" short ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${short})
endforeach()

install(TARGETS kvtier RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${kvtier_libraries} kvtier_all kvtier_warnings EXPORT kvtierTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT kvtierTargets NAMESPACE kvtier:: DESTINATION ${KVTIER_INSTALL_CMAKEDIR})

# The command's own parts (platforms/commands/) are not a library: their headers stay out.
foreach(area tlm workloads cosim platforms)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${area}/ DESTINATION ${KVTIER_INSTALL_INCLUDEDIR}/${area}
          FILES_MATCHING PATTERN "*.h" PATTERN "commands" EXCLUDE)
endforeach()
# The platform files, where the include search finds them (PREFIX/share/kvtier/platforms).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/platforms/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kvtier/platforms
        FILES_MATCHING PATTERN "*.ini")
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/plot/kvtier_plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/kvtier)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kvtierConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kvtierConfig.cmake INSTALL_DESTINATION ${KVTIER_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kvtierConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kvtierConfig.cmake ${PROJECT_BINARY_DIR}/kvtierConfigVersion.cmake
        DESTINATION ${KVTIER_INSTALL_CMAKEDIR})
