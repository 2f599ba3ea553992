// The tables and JSON rows of `kvtier link-study` for one link: single transfers, the idle read
// latency by source, streams of reads and writes, and 64 B metadata under bulk load. The
// measurements are tlm/link/link_study.h; this file formats them.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "platforms/commands/link_study_parts.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/link_study.h"

namespace kvtier::link_study {

void study_link(const StudyLink& l, const LinkStudyOptions& o, const std::vector<uint64_t>& sizes,
                const std::vector<double>& read_fractions, const std::vector<double>& rates,
                std::ostream& os, nlohmann::json& out) {
  const LinkConfig& c = l.link;
  auto probe = make_link_protocol(c);
  const std::string unit = probe->unit_name();
  const References ref = references_for(c);
  os << "\n=== " << l.name << ": " << name_of(c.protocol) << " x" << c.lanes << " at "
     << fixed(c.gt_per_s, 0) << " GT/s, " << fixed(c.bytes_per_s() / 1e9, 1)
     << " GB/s per direction after encoding (" << l.file << ") ===\n";

  os << "\nSingle transfers on an idle link [model output]; wire bytes both directions, before "
        "line encoding\n";
  os << "  " << std::left << std::setw(30) << "transfer" << std::setw(9) << "channel" << std::right
     << std::setw(12) << "payload B" << std::setw(12) << "wire B" << std::setw(14) << "wire/payload"
     << std::setw(9) << (unit + "s") << std::setw(7) << "slots" << std::setw(18)
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
  os << "\n  adder over a local DRAM load (host path + " << fixed(o.dram_ns, 0)
     << " ns media): " << fixed(b.adder_over_local_ns, 1)
     << " ns (link pipelines, serialisation, device processing)\n";
  out["idle_read_latency"].push_back({{"link", l.name},
                                      {"host_path_ns", b.host_path_ns},
                                      {"link_latency_ns", b.link_latency_ns},
                                      {"request_serialisation_ns", b.request_serialisation_ns},
                                      {"device_ns", b.device_ns},
                                      {"response_serialisation_ns", b.response_serialisation_ns},
                                      {"total_ns", b.total_ns},
                                      {"adder_over_local_ns", b.adder_over_local_ns},
                                      {"reference_ns", ref.idle_read_ns.value}});

  os << "\nStreams of host reads/writes of device memory [model output]; payload GB/s = 1e9 B/s, "
        "steady state\n";
  os << "  " << std::right << std::setw(8) << "size B"
     << "  " << std::left << std::setw(16) << "mix" << std::right << std::setw(13) << "payload GB/s"
     << std::setw(11) << "read GB/s" << std::setw(12) << "write GB/s" << std::setw(11)
     << "wire GB/s" << std::setw(12) << "efficiency" << std::setw(10) << (unit + "s/txn")
     << std::setw(9) << "p50 ns" << std::setw(10) << "p99 ns"
     << "   reference\n";
  for (uint64_t size : sizes) {
    for (double rf : read_fractions) {
      LinkStudyOptions so = o;
      so.outstanding = static_cast<uint32_t>(
          std::max<uint64_t>(4, std::min<uint64_t>(o.outstanding, 65536 / size)));
      so.stream_transactions =
          std::max<uint64_t>(200, std::min<uint64_t>(o.stream_transactions, (64ull << 20) / size));
      // A host capping its loads and stores (link.root_complex_load_gbps / _store_gbps) backs
      // them up in its root complex: the window then leaves out the drain, where the last of
      // one kind finish on a link the other has left and would read above the cap.
      const bool host_capped = c.root_complex_load_gbps > 0 || c.root_complex_store_gbps > 0;
      so.steady_window =
          (rf > 0 && c.root_complex_load_gbps > 0) || (rf < 1 && c.root_complex_store_gbps > 0);
      const StreamResult s = measure_stream(c, size, rf, so);
      std::string reference;
      // The references are link ceilings and measurements of whole systems: beside a device
      // limited by --device-read-gbps / --device-write-gbps, or such a host, they would compare
      // unlike things.
      if (size == 64 && !o.device().limited() && !host_capped) {
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
         << mix_name(rf) << std::right << std::setw(13) << fixed(s.payload_gbps, 2) << std::setw(11)
         << fixed(s.read_gbps, 2) << std::setw(12) << fixed(s.write_gbps, 2) << std::setw(11)
         << fixed(s.wire_gbps, 2) << std::setw(12) << fixed(s.efficiency, 3) << std::setw(10)
         << fixed(s.units_per_txn, 3) << std::setw(9) << fixed(s.latency_p50_ns, 0) << std::setw(10)
         << fixed(s.latency_p99_ns, 0) << "   " << reference << "\n";
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

  if (c.root_complex_load_gbps > 0 || c.root_complex_store_gbps > 0)
    os << "  (host root complex caps CPU loads at " << fixed(c.root_complex_load_gbps, 1)
       << " GB/s and stores at " << fixed(c.root_complex_store_gbps, 1)
       << " GB/s (0: no cap): the streams are the host's, not link ceilings; no reference is "
          "given)\n";
  if (o.device().limited())
    os << "  (device limited to " << fixed(o.device_read_gbps, 1) << " GB/s read, "
       << fixed(o.device_write_gbps, 1) << " GB/s write (0: unlimited), " << o.device_banks
       << " banks: the streams are the device's, not link ceilings; no reference is given)\n";

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

}  // namespace kvtier::link_study
