// Runs `kvtier link-study` on its own, so the command's tests do not need the whole kvtier binary.
#include <systemc>

namespace kvtier {
int cmd_link_study(int argc, char** argv);
}

int sc_main(int argc, char** argv) { return kvtier::cmd_link_study(argc, argv); }
