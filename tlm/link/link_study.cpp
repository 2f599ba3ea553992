#include "tlm/link/link_study.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <queue>
#include <random>

#include "tlm/common/timeline.h"
#include "tlm/link/cxl_flit_protocol.h"
#include "tlm/link/root_complex.h"

namespace kvtier {

namespace {

using sc_core::sc_time;

sc_time ns(double v) { return sc_time(v, sc_core::SC_NS); }
double to_ns(const sc_time& t) { return t.to_seconds() * 1e9; }

// Events in time order (ties in the order they were posted), each a callback at its time.
class EventLoop {
 public:
  void post(const sc_time& at, std::function<void(const sc_time&)> fn) {
    queue_.push({at, next_++, std::move(fn)});
  }
  void run() {
    while (!queue_.empty()) {
      Event e = queue_.top();
      queue_.pop();
      e.fn(e.at);
    }
  }

 private:
  struct Event {
    sc_time at;
    uint64_t order;
    std::function<void(const sc_time&)> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t next_ = 0;
};

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / v.size();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(p * v.size())) - 1;
  return v[std::min(i, v.size() - 1)];
}

uint64_t wire_total(const LinkProtocol& p) {
  return p.wire_stats(Direction::Downstream).wire_bytes +
         p.wire_stats(Direction::Upstream).wire_bytes;
}

std::string channel_of(const LinkConfig& c, TxnClass cls) {
  if (c.protocol == LinkProtocolKind::Pcie5 || c.protocol == LinkProtocolKind::Simple)
    return "PCIe";
  return is_cxl_mem(cls) ? "CXL.mem" : "CXL.io";
}

double device_ns(const LinkStudyOptions& o) { return o.device_ctrl_ns + o.dram_ns; }

// One transaction alone: request (and answer) on a fresh protocol, issued at time 0. A read
// larger than one request piece (a 64 B line of CXL.mem, a PCIe read request of
// link.max_read_request_bytes) is answered piece by piece: the device starts on each request as
// it arrives, so its data streams back while later requests are still on the wire, as a device
// serves a read that the host (or a DMA engine) issues as a stream of requests. Pieces of 64
// lines for CXL.mem keep the line packer on its bulk path; the data of each piece still leaves
// only once that piece's last request has arrived.
TransferCost one_transfer(const LinkConfig& config, const LinkStudyOptions& o,
                          const std::string& what, TxnClass cls, Direction dir, bool read,
                          uint64_t bytes) {
  auto p = make_link_protocol(config);
  TransferCost c;
  c.what = what;
  c.channel = channel_of(config, cls);
  c.payload_bytes = bytes;
  const auto count = [&](const LinkTransfer& t) {
    c.wire_bytes += t.wire_bytes;
    c.units += t.units;
    c.slots += t.slots;
    c.serialisation_ns += to_ns(t.last_bit - t.first_bit);
  };
  const sc_time t0 = sc_core::SC_ZERO_TIME;
  const bool host_load = cls == TxnClass::MemRead || cls == TxnClass::MemWrite;
  sc_time done = t0;
  // A device limited in rate serves the pieces of a read through its banks (an idle device: the
  // fixed delay either way).
  BankedDevice device(o.device());
  uint64_t next_line = 0;
  // A device's DMA passes the host's root complex (link.root_complex_dma_gbps).
  RootComplexLimit root_complex(config.root_complex_dma_gbps);
  const bool dma = RootComplexLimit::applies_to(cls) && dir == Direction::Upstream;
  // A CPU's loads and stores pass it too, where capped (link.root_complex_load_gbps, _store_).
  RootComplexLimit loads(host_load ? config.root_complex_load_gbps : 0);
  RootComplexLimit stores(host_load ? config.root_complex_store_gbps : 0);
  if (read) {
    const uint64_t piece = is_cxl_mem(cls) && config.protocol != LinkProtocolKind::Pcie5 &&
                                   config.protocol != LinkProtocolKind::Simple
                               ? 64 * 64
                               : std::max<uint64_t>(64, config.max_read_request_bytes);
    for (uint64_t offset = 0; offset < bytes; offset += piece) {
      const uint64_t n = std::min(piece, bytes - offset);
      const LinkTransfer a = p->send({dir, cls, false, 0, n}, t0);
      count(a);
      const sc_time at_device = a.last_bit + p->latency(dir);
      const bool served = o.device().limited() && host_load;
      const sc_time answer =
          served ? ns(device.serve(true, next_line, (n + 63) / 64, to_ns(at_device)))
                 : at_device + ns(device_ns(o));
      next_line += (n + 63) / 64;
      const LinkTransfer b = p->send({reverse(dir), cls, true, n, 0}, answer);
      count(b);
      const sc_time lat = p->latency(reverse(dir));
      const sc_time back =
          dma ? root_complex.pass(reverse(dir), b.first_bit + lat, b.last_bit + lat, n)
              : loads.pass(reverse(dir), b.first_bit + lat, b.last_bit + lat, n);
      done = std::max(done, back);
    }
  } else {
    const LinkTransfer a = p->send({dir, cls, false, bytes, 0}, stores.admit(dir, t0, bytes));
    count(a);
    const sc_time lat = p->latency(dir);
    done = dma ? root_complex.pass(dir, a.first_bit + lat, a.last_bit + lat, bytes)
               : a.last_bit + lat;
    if (p->write_completes(cls))
      count(p->send({reverse(dir), cls, true, 0, 0}, done + ns(o.device_ctrl_ns)));
  }
  c.idle_latency_ns = to_ns(done) + (host_load && read ? o.host_path_ns : 0.0);
  // DLLPs and credit-only flits the transaction caused on an otherwise idle link.
  p->flush(sc_time(1.0, sc_core::SC_SEC));
  c.wire_bytes = wire_total(*p);
  return c;
}

}  // namespace

std::vector<TransferCost> transfer_costs(const LinkConfig& config, const LinkStudyOptions& o) {
  const uint64_t block = 5ull << 20;
  const auto D = Direction::Downstream;
  const auto U = Direction::Upstream;
  std::vector<TransferCost> rows;
  rows.push_back(
      one_transfer(config, o, "64 B descriptor write", TxnClass::DescriptorWrite, D, false, 64));
  rows.push_back(
      one_transfer(config, o, "64 B UPDATE_POLICY write", TxnClass::UpdatePolicy, D, false, 64));
  rows.push_back(one_transfer(config, o, "8 B doorbell write", TxnClass::Doorbell, D, false, 8));
  rows.push_back(
      one_transfer(config, o, "32 B completion write", TxnClass::CompletionWrite, U, false, 32));
  rows.push_back(one_transfer(config, o, "64 B mem read", TxnClass::MemRead, D, true, 64));
  rows.push_back(one_transfer(config, o, "64 B mem write", TxnClass::MemWrite, D, false, 64));
  rows.push_back(one_transfer(config, o, "5 MiB DMA write (promotion)", TxnClass::PayloadWrite, U,
                              false, block));
  rows.push_back(
      one_transfer(config, o, "5 MiB DMA read (demotion)", TxnClass::PayloadRead, U, true, block));
  rows.push_back(one_transfer(config, o, "5 MiB mem read", TxnClass::MemRead, D, true, block));
  return rows;
}

ReadLatencyBreakdown idle_read_latency(const LinkConfig& config, const LinkStudyOptions& o) {
  auto p = make_link_protocol(config);
  ReadLatencyBreakdown b;
  const LinkTransfer req =
      p->send({Direction::Downstream, TxnClass::MemRead, false, 0, 64}, sc_core::SC_ZERO_TIME);
  const sc_time at_device = req.last_bit + p->latency(Direction::Downstream);
  const LinkTransfer rsp =
      p->send({Direction::Upstream, TxnClass::MemRead, true, 64, 0}, at_device + ns(device_ns(o)));
  b.host_path_ns = o.host_path_ns;
  b.request_serialisation_ns = to_ns(req.last_bit);
  b.response_serialisation_ns = to_ns(rsp.last_bit - rsp.first_bit);
  b.link_latency_ns = to_ns(p->latency(Direction::Downstream) + p->latency(Direction::Upstream));
  b.device_ns = device_ns(o);
  b.total_ns = o.host_path_ns + to_ns(rsp.last_bit + p->latency(Direction::Upstream));
  b.adder_over_local_ns = b.total_ns - (o.host_path_ns + o.dram_ns);
  return b;
}

namespace {

// Host reads and writes of device memory over one link, with the device behind it (a fixed
// delay, or a BankedDevice when the options limit its rates), driven by an EventLoop.
class MemTraffic {
 public:
  MemTraffic(const LinkConfig& config, const LinkStudyOptions& o, EventLoop& loop)
      : protocol_(make_link_protocol(config)),
        o_(o),
        loop_(loop),
        device_(o.device()),
        limited_(o.device().limited()),
        loads_(config.root_complex_load_gbps),
        stores_(config.root_complex_store_gbps),
        addresses_(o.seed * 0x9e3779b97f4a7c15ull + 1) {}
  LinkProtocol& link() { return *protocol_; }
  uint64_t units = 0, replays = 0;

  // One transaction of `size` bytes issued at `now`; `done` gets the time the host has its
  // data (a read) or its completion (a write; a posted write: once the device took it).
  void issue(bool read, uint64_t size, const sc_time& now,
             std::function<void(const sc_time&)> done) {
    const Direction down = Direction::Downstream, up = Direction::Upstream;
    LinkProtocol& l = *protocol_;
    if (read) {
      const LinkTransfer a = l.send({down, TxnClass::MemRead, false, 0, size}, now);
      count(a);
      const sc_time at_device = a.last_bit + l.latency(down);
      const sc_time answer =
          limited_ ? serve(true, size, at_device) : at_device + ns(device_ns(o_));
      loop_.post(answer, [this, size, done](const sc_time& t) {
        const LinkTransfer b = protocol_->send({up, TxnClass::MemRead, true, size, 0}, t);
        count(b);
        const sc_time lat = protocol_->latency(up);
        // The data enters the host through its root complex (capped where set).
        done(loads_.pass(up, b.first_bit + lat, b.last_bit + lat, size));
      });
      return;
    }
    // A store leaves the host when its root complex takes it (spaced to the cap where set); a
    // later one is sent at that time, so the link sees every message in time order.
    const sc_time admitted = stores_.admit(down, now, size);
    if (admitted > now) {
      loop_.post(admitted, [this, size, done](const sc_time& t) { store(size, t, done); });
      return;
    }
    store(size, now, done);
  }

 private:
  void store(uint64_t size, const sc_time& now, const std::function<void(const sc_time&)>& done) {
    const Direction down = Direction::Downstream, up = Direction::Upstream;
    LinkProtocol& l = *protocol_;
    const LinkTransfer a = l.send({down, TxnClass::MemWrite, false, size, 0}, now);
    count(a);
    const sc_time at_device = a.last_bit + l.latency(down);
    if (l.write_completes(TxnClass::MemWrite)) {
      const sc_time accepted =
          limited_ ? serve(false, size, at_device) : at_device + ns(o_.device_ctrl_ns);
      loop_.post(accepted, [this, done](const sc_time& t) {
        const LinkTransfer b = protocol_->send({up, TxnClass::MemWrite, true, 0, 0}, t);
        count(b);
        done(b.last_bit + protocol_->latency(up));
      });
    } else {
      // A posted write is done once the device has it; a limited device takes it when a bank
      // accepts it (its flow control holds the writer back meanwhile).
      done(limited_ ? serve(false, size, at_device) : at_device);
    }
  }
  void count(const LinkTransfer& t) {
    units += t.units;
    replays += t.replays;
  }
  sc_time serve(bool read, uint64_t size, const sc_time& at_device) {
    // Random line addresses (as a loaded-latency tool's random access): the bank each
    // transaction starts at is drawn from the study's seed.
    const uint64_t lines = std::max<uint64_t>(1, (size + 63) / 64);
    return ns(device_.serve(read, addresses_(), lines, to_ns(at_device)));
  }
  std::unique_ptr<LinkProtocol> protocol_;
  const LinkStudyOptions& o_;
  EventLoop& loop_;
  BankedDevice device_;
  bool limited_;
  RootComplexLimit loads_, stores_;  // a CPU's CXL.mem through the host's root complex
  std::mt19937_64 addresses_;
};

bool is_read_at(uint64_t i, double read_fraction) {
  // Deterministic interleave: transaction i is a read when the read count steps up.
  return std::floor((i + 1) * read_fraction + 1e-9) > std::floor(i * read_fraction + 1e-9);
}

}  // namespace

StreamResult measure_stream(const LinkConfig& config, uint64_t size_bytes, double read_fraction,
                            const LinkStudyOptions& o) {
  EventLoop loop;
  MemTraffic traffic(config, o, loop);
  LinkProtocol& link = traffic.link();
  StreamResult r;
  r.size_bytes = size_bytes;
  r.read_fraction = read_fraction;
  const uint64_t total = std::max<uint64_t>(o.stream_transactions, 10);
  const uint64_t warmup = total / 10;
  uint64_t issued = 0, completed = 0;
  uint64_t read_bytes = 0, write_bytes = 0;
  sc_time window_start, window_end;
  std::vector<double> latencies;
  latencies.reserve(total);

  std::function<void(const sc_time&)> issue = [&](const sc_time& now) {
    if (issued >= total) return;
    const uint64_t i = issued++;
    const bool read = is_read_at(i, read_fraction);
    const sc_time started = now;
    traffic.issue(read, size_bytes, now, [&, started, read](const sc_time& done) {
      ++completed;
      if (completed == warmup) window_start = done;
      const bool draining = o.steady_window && completed + o.outstanding > total;
      if (completed > warmup && !draining) {
        (read ? read_bytes : write_bytes) += size_bytes;
        latencies.push_back(to_ns(done - started));
        window_end = std::max(window_end, done);
      }
      loop.post(done, issue);
    });
  };
  for (uint32_t k = 0; k < o.outstanding; ++k) loop.post(sc_core::SC_ZERO_TIME, issue);
  loop.run();
  link.flush(window_end);
  const double span_s = (window_end - window_start).to_seconds();
  r.read_gbps = span_s > 0 ? read_bytes / span_s / 1e9 : 0;
  r.write_gbps = span_s > 0 ? write_bytes / span_s / 1e9 : 0;
  r.payload_gbps = r.read_gbps + r.write_gbps;
  const double all_s = window_end.to_seconds();
  const uint64_t wire = wire_total(link);
  r.wire_gbps = all_s > 0 ? wire / all_s / 1e9 : 0;
  r.efficiency = wire ? static_cast<double>(total * size_bytes) / wire : 0;
  r.units_per_txn = static_cast<double>(traffic.units) / total;
  r.latency_p50_ns = percentile(latencies, 0.50);
  r.latency_p99_ns = percentile(latencies, 0.99);
  r.latency_mean_ns = mean(latencies);
  r.replays = traffic.replays;
  return r;
}

CurveResult measure_curve(const LinkConfig& config, double read_fraction,
                          const std::vector<double>& loads, const LinkStudyOptions& o) {
  CurveResult c;
  c.read_fraction = read_fraction;
  LinkStudyOptions closed = o;
  closed.stream_transactions = 5 * std::max<uint64_t>(o.stream_transactions, 10);
  closed.steady_window = true;
  const StreamResult peak = measure_stream(config, 64, read_fraction, closed);
  c.saturation_gbps = peak.payload_gbps;
  c.saturation_mean_ns = peak.latency_mean_ns + o.host_path_ns;
  // What the curve's latency measures: the reads' load-to-use, or the writes' completion when
  // the mix has no reads.
  const bool reads_measured = read_fraction > 0;
  {
    EventLoop loop;
    MemTraffic alone(config, o, loop);
    sc_time done;
    alone.issue(reads_measured, 64, sc_core::SC_ZERO_TIME, [&](const sc_time& t) { done = t; });
    loop.run();
    c.idle_ns = to_ns(done) + o.host_path_ns;
  }
  const uint64_t total = std::max<uint64_t>(o.stream_transactions, 10);
  const uint64_t warmup = total / 10;
  for (const double load : loads) {
    CurvePoint pt;
    pt.offered_gbps = load * c.saturation_gbps;
    EventLoop loop;
    MemTraffic traffic(config, o, loop);
    // Poisson arrivals at the offered rate, from the study's seed.
    std::mt19937_64 rng(o.seed);
    const double per_s = pt.offered_gbps * 1e9 / 64.0;
    uint64_t completed = 0, bytes = 0;
    sc_time window_start, window_end;
    std::vector<double> latencies;
    double t_s = 0;
    for (uint64_t i = 0; i < total; ++i) {
      const double u = 1.0 - static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
      t_s += -std::log(u) / per_s;
      const bool read = is_read_at(i, read_fraction);
      loop.post(seconds(t_s), [&, read](const sc_time& now) {
        const sc_time started = now;
        traffic.issue(read, 64, now, [&, started, read](const sc_time& done) {
          ++completed;
          if (completed == warmup) window_start = done;
          if (completed <= warmup) return;
          bytes += 64;
          window_end = std::max(window_end, done);
          if (read == reads_measured) latencies.push_back(to_ns(done - started) + o.host_path_ns);
        });
      });
    }
    loop.run();
    const double span_s = (window_end - window_start).to_seconds();
    pt.achieved_gbps = span_s > 0 ? bytes / span_s / 1e9 : 0;
    pt.mean_ns = mean(latencies);
    pt.p50_ns = percentile(latencies, 0.50);
    pt.p99_ns = percentile(latencies, 0.99);
    c.points.push_back(pt);
  }
  return c;
}

MetadataResult measure_metadata_under_bulk(const LinkConfig& config, double rate_per_s,
                                           const LinkStudyOptions& o) {
  MetadataResult m;
  m.rate_per_s = rate_per_s;
  const uint32_t request =
      config.protocol == LinkProtocolKind::Simple ? 4096 : config.max_read_request_bytes;
  // Auto: just enough reads in flight to saturate the direction, 1.25 x bandwidth x round trip,
  // so the transmit queue a descriptor finds is what saturation needs, not an arbitrary backlog.
  uint32_t bulk_outstanding = o.bulk_outstanding_reads;
  if (bulk_outstanding == 0) {
    auto probe = make_link_protocol(config);
    const double round_trip_s =
        (probe->latency(Direction::Upstream) + probe->latency(Direction::Downstream)).to_seconds() +
        2.0 * request / config.bytes_per_s();
    bulk_outstanding =
        static_cast<uint32_t>(std::ceil(1.25 * config.bytes_per_s() * round_trip_s / request)) + 1;
  }
  m.bulk_outstanding_reads = bulk_outstanding;
  auto run = [&](bool with_metadata, std::vector<double>& latencies) {
    auto p = make_link_protocol(config);
    LinkProtocol& link = *p;
    EventLoop loop;
    const uint64_t requests = (o.bulk_bytes + request - 1) / request;
    uint64_t issued = 0;
    sc_time last_done;
    // Device DMA engine: keeps bulk_outstanding_reads MRd of MRRS bytes in flight; the host
    // answers each with completions, downstream, as soon as the request arrives.
    std::function<void(const sc_time&)> issue = [&](const sc_time& now) {
      if (issued >= requests) return;
      ++issued;
      const LinkTransfer a =
          link.send({Direction::Upstream, TxnClass::PayloadRead, false, 0, request}, now);
      loop.post(a.last_bit + link.latency(Direction::Upstream), [&](const sc_time& t) {
        const LinkTransfer b =
            link.send({Direction::Downstream, TxnClass::PayloadRead, true, request, 0}, t);
        const sc_time done = b.last_bit + link.latency(Direction::Downstream);
        last_done = std::max(last_done, done);
        loop.post(done, issue);
      });
    };
    for (uint32_t k = 0; k < bulk_outstanding; ++k) loop.post(sc_core::SC_ZERO_TIME, issue);
    if (with_metadata && rate_per_s > 0) {
      // Poisson arrivals over the expected bulk duration, from the study's seed.
      std::mt19937_64 rng(o.seed);
      const double horizon_s = o.bulk_bytes / config.bytes_per_s();
      double t_s = 0;
      for (;;) {
        const double u = 1.0 - static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
        t_s += -std::log(u) / rate_per_s;
        if (t_s >= horizon_s) break;
        loop.post(seconds(t_s), [&](const sc_time& t) {
          const LinkTransfer d =
              link.send({Direction::Downstream, TxnClass::DescriptorWrite, false, 64, 0}, t);
          latencies.push_back(to_ns(d.last_bit + link.latency(Direction::Downstream) - t));
        });
      }
    }
    loop.run();
    return o.bulk_bytes / last_done.to_seconds() / 1e9;
  };
  std::vector<double> none, latencies;
  m.bulk_alone_gbps = run(false, none);
  m.bulk_payload_gbps = run(true, latencies);
  m.stolen_fraction = m.bulk_alone_gbps > 0 ? 1.0 - m.bulk_payload_gbps / m.bulk_alone_gbps : 0;
  m.samples = latencies.size();
  m.metadata_latency_p50_ns = percentile(latencies, 0.50);
  m.metadata_latency_p99_ns = percentile(latencies, 0.99);
  {
    auto p = make_link_protocol(config);
    const LinkTransfer d = p->send({Direction::Downstream, TxnClass::DescriptorWrite, false, 64, 0},
                                   sc_core::SC_ZERO_TIME);
    m.metadata_idle_ns = to_ns(d.last_bit + p->latency(Direction::Downstream));
  }
  return m;
}

}  // namespace kvtier
