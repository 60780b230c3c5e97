// The contract of peer_bandwidth, as the judge and the worker exchange it (../course_remote.hpp,
// ../remote_ranks.hpp). The source and destination are the worker's device pointers; the time
// is the worker's word, as it was in one process.
#include "peer_bandwidth.hpp"

#include "remote_ranks.hpp"

namespace course {
namespace remote {

template <>
struct Marshal<BandwidthMatrix> {
  static void put(Writer& out, const BandwidthMatrix& matrix) {
    out.put<std::int32_t>(matrix.ranks);
    Marshal<std::vector<double>>::put(out, matrix.gb_per_s);
  }
  static BandwidthMatrix get(Reader& in) {
    BandwidthMatrix matrix;
    matrix.ranks = in.get<std::int32_t>();
    matrix.gb_per_s = Marshal<std::vector<double>>::get(in);
    return matrix;
  }
};

}  // namespace remote
}  // namespace course

COURSE_REMOTE_FUNCTION(double, time_peer_copy,
                       (course::RankGroup& group, int from, int to, const void* src, void* dst, std::size_t bytes,
                        int repeats),
                       (group, from, to, src, dst, bytes, repeats))
COURSE_REMOTE_FUNCTION(BandwidthMatrix, measure_peer_bandwidth,
                       (course::RankGroup& group, std::size_t bytes, int repeats), (group, bytes, repeats))
