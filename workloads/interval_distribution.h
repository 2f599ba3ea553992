#pragma once
// Positive random intervals (inter-arrival times, think times) with a given mean and coefficient
// of variation (cv = standard deviation / mean). cv = 1 with the gamma or Weibull shape is the
// exponential distribution, drawn exactly as std::exponential_distribution(rate) draws it, so a
// Poisson process stays bit-identical to one built on that class; cv = 0 is a constant.
#include <cstdint>
#include <random>
#include <string>

namespace kvtier::workload {

enum class IntervalShape { kGamma, kWeibull, kLognormal };

// "gamma", "weibull", "lognormal"; throws std::invalid_argument for anything else.
IntervalShape interval_shape_from_string(const std::string& name);
std::string to_string(IntervalShape shape);

class IntervalDistribution {
 public:
  // `rate` = 1 / mean, per second (given as a rate so the exponential case uses the caller's
  // exact rate). Throws std::invalid_argument for rate <= 0 or cv outside [0, kMaxCv].
  IntervalDistribution(IntervalShape shape, double rate, double cv);

  double operator()(std::mt19937_64& rng);

  static constexpr double kMaxCv = 20.0;

 private:
  enum class Kind { kConstant, kExponential, kGamma, kWeibull, kLognormal } kind_;
  double mean_;
  std::exponential_distribution<double> exponential_;
  std::gamma_distribution<double> gamma_;
  std::weibull_distribution<double> weibull_;
  std::lognormal_distribution<double> lognormal_;
};

// Weibull shape k whose cv is `cv` (bisection on Γ(1+2/k)/Γ(1+1/k)² − 1 = cv²).
double weibull_shape_for_cv(double cv);

}  // namespace kvtier::workload
