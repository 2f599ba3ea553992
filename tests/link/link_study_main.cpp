// Runs `kvtier link-study` on its own, so the command's tests do not need the whole kvtier binary.
// Called as `kvtier_link_study link-study [options]`: the command sees argv from its own name on,
// as kvtier's dispatcher hands it over.
#include <cstring>
#include <systemc>

namespace kvtier {
int cmd_link_study(int argc, char** argv);
}

int sc_main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "link-study") == 0)
    return kvtier::cmd_link_study(argc - 1, argv + 1);
  return kvtier::cmd_link_study(argc, argv);
}
