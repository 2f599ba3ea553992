#include "workloads/interval_distribution.h"

#include <cmath>
#include <stdexcept>

namespace kvtier::workload {

IntervalShape interval_shape_from_string(const std::string& name) {
  if (name == "gamma") return IntervalShape::kGamma;
  if (name == "weibull") return IntervalShape::kWeibull;
  if (name == "lognormal") return IntervalShape::kLognormal;
  throw std::invalid_argument("'" + name + "' is not one of gamma, weibull, lognormal");
}

std::string to_string(IntervalShape shape) {
  switch (shape) {
    case IntervalShape::kGamma:
      return "gamma";
    case IntervalShape::kWeibull:
      return "weibull";
    case IntervalShape::kLognormal:
      return "lognormal";
  }
  return "?";
}

double weibull_shape_for_cv(double cv) {
  const auto cv_of = [](double k) {
    return std::sqrt(std::exp(std::lgamma(1.0 + 2.0 / k) - 2.0 * std::lgamma(1.0 + 1.0 / k)) - 1.0);
  };
  // cv falls as k rises: cv(0.05) is about 1e8, cv(200) about 0.0064.
  double lo = 0.05, hi = 200.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    if (cv_of(mid) > cv) lo = mid;
    else hi = mid;
  }
  return std::sqrt(lo * hi);
}

IntervalDistribution::IntervalDistribution(IntervalShape shape, double rate, double cv)
    : mean_(1.0 / rate) {
  if (!(rate > 0.0) || !std::isfinite(rate))
    throw std::invalid_argument("interval rate must be positive");
  if (!(cv >= 0.0 && cv <= kMaxCv)) throw std::invalid_argument("interval cv must lie in [0, 20]");
  if (cv == 0.0) {
    kind_ = Kind::kConstant;
  } else if (cv == 1.0 && shape != IntervalShape::kLognormal) {
    kind_ = Kind::kExponential;
    exponential_ = std::exponential_distribution<double>(rate);
  } else if (shape == IntervalShape::kGamma) {
    kind_ = Kind::kGamma;
    const double k = 1.0 / (cv * cv);
    gamma_ = std::gamma_distribution<double>(k, mean_ / k);
  } else if (shape == IntervalShape::kWeibull) {
    kind_ = Kind::kWeibull;
    const double k = weibull_shape_for_cv(cv);
    weibull_ = std::weibull_distribution<double>(k, mean_ / std::exp(std::lgamma(1.0 + 1.0 / k)));
  } else {
    kind_ = Kind::kLognormal;
    const double sigma2 = std::log1p(cv * cv);
    lognormal_ =
        std::lognormal_distribution<double>(std::log(mean_) - sigma2 / 2.0, std::sqrt(sigma2));
  }
}

double IntervalDistribution::operator()(std::mt19937_64& rng) {
  switch (kind_) {
    case Kind::kConstant:
      return mean_;
    case Kind::kExponential:
      return exponential_(rng);
    case Kind::kGamma:
      return gamma_(rng);
    case Kind::kWeibull:
      return weibull_(rng);
    case Kind::kLognormal:
      return lognormal_(rng);
  }
  return mean_;
}

}  // namespace kvtier::workload
