// kvtier link-study: what a 64 B metadata transaction costs on PCIe 5, CXL 2 (68 B flits)
// and CXL 3 (256 B flits), what payload bandwidth 64 B CXL.mem lines achieve, and what
// metadata costs bulk KV movement. The measurements are tlm/link/link_study.h; this file
// picks the links, formats the tables and writes the JSON.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "platforms/cli_options.h"
#include "platforms/commands/link_study_parts.h"
#include "platforms/platform_config.h"
#include "tlm/link/link_study.h"

namespace po = boost::program_options;

namespace kvtier {

using namespace link_study;

int cmd_link_study(int argc, char** argv) {
  LinkStudyOptions o;
  std::vector<std::string> presets, platforms, protocols, sets;
  std::string sizes_text = "64,4096,65536", json_path;
  std::vector<double> read_fractions, rates;
  po::options_description desc(
      "kvtier link-study: per link, the cost of single transfers (64 B metadata vs 5 MiB blocks), "
      "payload\n"
      "bandwidth of read/write streams, idle read latency, and 64 B metadata latency under bulk "
      "load.\n"
      "Every number printed is model output unless marked as a reference with its class "
      "(M/V/D).\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "preset", po::value(&presets)->composing(),
      "link preset from platforms/links (repeatable; default: pcie5-x16 cxl2-x8 cxl2-x16 cxl3-x16 "
      "cxl3-lopt-x16)")("platform", po::value(&platforms)->composing(),
                        "platform file whose [link] section to study (repeatable)")(
      "protocol", po::value(&protocols)->composing(),
      "keep only links of this protocol (repeatable)")(
      "set", po::value(&sets)->composing(),
      "override a key of every studied file, section.key=value (repeatable)")(
      "sizes", po::value(&sizes_text)->default_value(sizes_text),
      "transaction sizes for the stream table, bytes, comma-separated")(
      "read-fraction", po::value(&read_fractions)->composing(),
      "read fraction of a stream (repeatable; default 1, 0, 0.6667)")(
      "metadata-rate", po::value(&rates)->composing(),
      "64 B descriptor writes per second under bulk load (repeatable; default 1e5 1e6 1e7)")(
      "host-path-ns", po::value(&o.host_path_ns)->default_value(o.host_path_ns),
      "CPU load path outside the link, ns, in the idle read latency (D: CXL-DMSim simulated 286.8 "
      "ns less its link, device and media delays)")(
      "device-ctrl-ns", po::value(&o.device_ctrl_ns)->default_value(o.device_ctrl_ns),
      "device CXL.mem processing per access, ns (D: CXL-DMSim default)")(
      "dram-ns", po::value(&o.dram_ns)->default_value(o.dram_ns),
      "tier DRAM media access, ns (D: CXL-DMSim default)")(
      "transactions", po::value(&o.stream_transactions)->default_value(o.stream_transactions),
      "64 B transactions per stream measurement")(
      "outstanding", po::value(&o.outstanding)->default_value(o.outstanding),
      "64 B transactions in flight in a stream (larger sizes: 64 KiB in flight)")(
      "bulk-bytes", po::value(&o.bulk_bytes)->default_value(o.bulk_bytes),
      "bytes of DMA demotion reads streamed while metadata is measured")(
      "bulk-outstanding",
      po::value(&o.bulk_outstanding_reads)->default_value(o.bulk_outstanding_reads),
      "DMA read requests (MRRS bytes each) in flight; 0 = just enough to saturate (1.25 x "
      "bandwidth x round trip)")("seed", po::value(&o.seed)->default_value(o.seed),
                                 "seed of the metadata arrival process")(
      "json", JsonOutput::option(json_path),
      "also write the results as JSON to FILE; without FILE to standard output (the tables to "
      "standard error)");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(desc).run();
    check_arguments(parsed, desc);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kvtier link-study: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (read_fractions.empty()) read_fractions = {1.0, 0.0, 2.0 / 3.0};
  if (rates.empty()) rates = {1e5, 1e6, 1e7};
  std::vector<StudyLink> links;
  std::vector<uint64_t> sizes;
  try {
    sizes = parse_sizes(sizes_text);
    for (double rf : read_fractions)
      if (!(rf >= 0 && rf <= 1))
        throw ConfigError("link-study: --read-fraction " + fixed(rf, 3) + " is not in [0, 1]");
    for (double r : rates)
      if (!(r > 0 && r <= 1e9))
        throw ConfigError("link-study: --metadata-rate " + fixed(r, 0) +
                          " is not in (0, 1e9] per s");
    // Zero transactions measure nothing (the ratio of payload to wire bytes of an empty stream
    // came out above 1), zero in flight never sends.
    require_range("transactions", static_cast<double>(o.stream_transactions), 1, 1e9,
                  "64 B transactions per stream");
    require_range("outstanding", o.outstanding, 1, 1 << 20, "transactions in flight");
    require_range("bulk-bytes", static_cast<double>(o.bulk_bytes), 1, 1ull << 40, "bulk bytes");
    require_range("host-path-ns", o.host_path_ns, 0, 1e6);
    require_range("device-ctrl-ns", o.device_ctrl_ns, 0, 1e6);
    require_range("dram-ns", o.dram_ns, 0, 1e6);
    if (json_path != "-") require_output_file("json", json_path);
    if (presets.empty() && platforms.empty()) presets = kDefaultPresets;
    for (const auto& name : presets) {
      const std::string file = find_preset(name, argv[0]);
      links.push_back({name, file, load_platform(file, sets).link});
    }
    for (const auto& file : platforms)
      links.push_back({file, file, load_platform(file, sets).link});
    if (!protocols.empty()) {
      std::vector<StudyLink> kept;
      for (auto& l : links)
        for (const auto& p : protocols)
          if (name_of(l.link.protocol) == p) kept.push_back(l);
      links = kept;
      if (links.empty())
        throw ConfigError("link-study: no studied link has the requested --protocol");
    }
    for (const auto& l : links) validate_link_config(l.link);
  } catch (const std::exception& e) {
    std::cerr << "kvtier link-study: " << e.what() << "\n";
    return 2;
  }

  const JsonOutput json(json_path);  // from here on, tables go to stderr when the JSON takes stdout
  nlohmann::json out = {{"rows", nlohmann::json::array()},
                        {"metadata", nlohmann::json::array()},
                        {"transfers", nlohmann::json::array()},
                        {"idle_read_latency", nlohmann::json::array()}};
  std::ostream& os = std::cout;
  for (const auto& l : links) {
    const LinkConfig& c = l.link;
    auto probe = make_link_protocol(c);
    const std::string unit = probe->unit_name();
    const References ref = references_for(c);
    os << "\n=== " << l.name << ": " << name_of(c.protocol) << " x" << c.lanes << " at "
       << fixed(c.gt_per_s, 0) << " GT/s, " << fixed(c.bytes_per_s() / 1e9, 1)
       << " GB/s per direction after encoding (" << l.file << ") ===\n";

    os << "\nSingle transfers on an idle link [model output]; wire bytes both directions, before "
          "line encoding\n";
    os << "  " << std::left << std::setw(30) << "transfer" << std::setw(9) << "channel"
       << std::right << std::setw(12) << "payload B" << std::setw(12) << "wire B" << std::setw(14)
       << "wire/payload" << std::setw(9) << (unit + "s") << std::setw(7) << "slots" << std::setw(18)
       << "serialisation ns" << std::setw(17) << "idle latency ns"
       << "\n";
    for (const TransferCost& t : transfer_costs(c, o)) {
      os << "  " << std::left << std::setw(30) << t.what << std::setw(9) << t.channel << std::right
         << std::setw(12) << t.payload_bytes << std::setw(12) << t.wire_bytes << std::setw(14)
         << fixed(t.wire_per_payload(), 3) << std::setw(9) << t.units << std::setw(7) << t.slots
         << std::setw(18) << fixed(t.serialisation_ns, 1) << std::setw(17)
         << fixed(t.idle_latency_ns, 1) << "\n";
      out["transfers"].push_back({{"link", l.name},
                                  {"protocol", name_of(c.protocol)},
                                  {"lanes", c.lanes},
                                  {"transfer", t.what},
                                  {"channel", t.channel},
                                  {"payload_bytes", t.payload_bytes},
                                  {"wire_bytes", t.wire_bytes},
                                  {"wire_per_payload", t.wire_per_payload()},
                                  {"units", t.units},
                                  {"unit", unit},
                                  {"slots", t.slots},
                                  {"serialisation_ns", t.serialisation_ns},
                                  {"idle_latency_ns", t.idle_latency_ns}});
    }
    os << "  (idle latency: issue to data at the receiver; a read includes the device ("
       << fixed(o.device_ctrl_ns + o.dram_ns, 0) << " ns) and, for a mem read, the host path ("
       << fixed(o.host_path_ns, 0) << " ns))\n";

    const ReadLatencyBreakdown b = idle_read_latency(c, o);
    os << "\nIdle 64 B read latency [model output], ns: host path " << fixed(b.host_path_ns, 1)
       << " + link pipelines " << fixed(b.link_latency_ns, 1) << " + request serialisation "
       << fixed(b.request_serialisation_ns, 2) << " + device " << fixed(b.device_ns, 1)
       << " + response serialisation " << fixed(b.response_serialisation_ns, 2) << " = "
       << fixed(b.total_ns, 1) << " ns";
    if (ref.idle_read_ns.value > 0)
      os << "   reference " << ref.idle_read_ns.text << ": " << std::showpos
         << fixed(100.0 * (b.total_ns / ref.idle_read_ns.value - 1.0), 1) << std::noshowpos << " %";
    os << "\n";
    out["idle_read_latency"].push_back({{"link", l.name},
                                        {"host_path_ns", b.host_path_ns},
                                        {"link_latency_ns", b.link_latency_ns},
                                        {"request_serialisation_ns", b.request_serialisation_ns},
                                        {"device_ns", b.device_ns},
                                        {"response_serialisation_ns", b.response_serialisation_ns},
                                        {"total_ns", b.total_ns},
                                        {"reference_ns", ref.idle_read_ns.value}});

    os << "\nStreams of host reads/writes of device memory [model output]; payload GB/s = 1e9 B/s, "
          "steady state\n";
    os << "  " << std::right << std::setw(8) << "size B"
       << "  " << std::left << std::setw(16) << "mix" << std::right << std::setw(13)
       << "payload GB/s" << std::setw(11) << "read GB/s" << std::setw(12) << "write GB/s"
       << std::setw(11) << "wire GB/s" << std::setw(12) << "efficiency" << std::setw(10)
       << (unit + "s/txn") << std::setw(9) << "p50 ns" << std::setw(10) << "p99 ns"
       << "   reference\n";
    for (uint64_t size : sizes) {
      for (double rf : read_fractions) {
        LinkStudyOptions so = o;
        so.outstanding = static_cast<uint32_t>(
            std::max<uint64_t>(4, std::min<uint64_t>(o.outstanding, 65536 / size)));
        so.stream_transactions = std::max<uint64_t>(
            200, std::min<uint64_t>(o.stream_transactions, (64ull << 20) / size));
        const StreamResult s = measure_stream(c, size, rf, so);
        std::string reference;
        if (size == 64) {
          const Reference* r = rf >= 1.0                         ? &ref.read_only
                               : rf <= 0.0                       ? &ref.write_only
                               : std::abs(rf - 2.0 / 3.0) < 1e-3 ? &ref.mix_2to1
                                                                 : nullptr;
          if (r && r->value > 0) {
            std::ostringstream rs;
            rs << r->text << ": " << std::showpos
               << fixed(100.0 * (s.payload_gbps / r->value - 1.0), 1) << " %";
            reference = rs.str();
          }
        }
        os << "  " << std::right << std::setw(8) << size << "  " << std::left << std::setw(16)
           << mix_name(rf) << std::right << std::setw(13) << fixed(s.payload_gbps, 2)
           << std::setw(11) << fixed(s.read_gbps, 2) << std::setw(12) << fixed(s.write_gbps, 2)
           << std::setw(11) << fixed(s.wire_gbps, 2) << std::setw(12) << fixed(s.efficiency, 3)
           << std::setw(10) << fixed(s.units_per_txn, 3) << std::setw(9)
           << fixed(s.latency_p50_ns, 0) << std::setw(10) << fixed(s.latency_p99_ns, 0) << "   "
           << reference << "\n";
        out["rows"].push_back({{"protocol", name_of(c.protocol)},
                               {"link", l.name},
                               {"lanes", c.lanes},
                               {"size_bytes", size},
                               {"read_fraction", rf},
                               {"payload_gbps", s.payload_gbps},
                               {"wire_gbps", s.wire_gbps},
                               {"efficiency", s.efficiency},
                               {"flits_per_txn", s.units_per_txn},
                               {"unit", unit},
                               {"latency_p50_ns", s.latency_p50_ns},
                               {"latency_p99_ns", s.latency_p99_ns}});
      }
    }

    os << "\n64 B descriptor writes (Poisson) while device DMA demotions ("
       << fixed(o.bulk_bytes / 1048576.0, 0) << " MiB of 5 MiB blocks, MRd of "
       << c.max_read_request_bytes
       << " B, completions downstream) saturate the downstream direction [model output]\n";
    os << "  " << std::right << std::setw(12) << "rate /s" << std::setw(18) << "bulk alone GB/s"
       << std::setw(17) << "bulk with GB/s" << std::setw(11) << "stolen %" << std::setw(10)
       << "idle ns" << std::setw(9) << "p50 ns" << std::setw(10) << "p99 ns" << std::setw(9)
       << "samples" << std::setw(13) << "reads in fl."
       << "\n";
    for (double rate : rates) {
      const MetadataResult m = measure_metadata_under_bulk(c, rate, o);
      os << "  " << std::right << std::setw(12) << std::scientific << std::setprecision(1) << rate
         << std::defaultfloat << std::setw(18) << fixed(m.bulk_alone_gbps, 2) << std::setw(17)
         << fixed(m.bulk_payload_gbps, 2) << std::setw(11) << fixed(100.0 * m.stolen_fraction, 2)
         << std::setw(10) << fixed(m.metadata_idle_ns, 1) << std::setw(9)
         << fixed(m.metadata_latency_p50_ns, 0) << std::setw(10)
         << fixed(m.metadata_latency_p99_ns, 0) << std::setw(9) << m.samples << std::setw(13)
         << m.bulk_outstanding_reads << "\n";
      out["metadata"].push_back({{"protocol", name_of(c.protocol)},
                                 {"link", l.name},
                                 {"rate_per_s", rate},
                                 {"bulk_alone_gbps", m.bulk_alone_gbps},
                                 {"bulk_payload_gbps", m.bulk_payload_gbps},
                                 {"stolen_fraction", m.stolen_fraction},
                                 {"metadata_idle_ns", m.metadata_idle_ns},
                                 {"metadata_latency_p50_ns", m.metadata_latency_p50_ns},
                                 {"metadata_latency_p99_ns", m.metadata_latency_p99_ns},
                                 {"samples", m.samples}});
    }
  }
  try {
    json.write(out.dump(2));
  } catch (const std::exception& e) {
    std::cerr << "kvtier link-study: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace kvtier
