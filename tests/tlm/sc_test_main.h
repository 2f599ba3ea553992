#pragma once
// SystemC test executables: libsystemc supplies main() and calls sc_main(). SystemC errors
// become exceptions so a test sees them instead of the process aborting.
#include <gtest/gtest.h>

#include <systemc>

#define KVTIER_SC_TEST_MAIN()                                                      \
  int sc_main(int argc, char** argv) {                                             \
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW); \
    sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW); \
    ::testing::InitGoogleTest(&argc, argv);                                        \
    return RUN_ALL_TESTS();                                                        \
  }
