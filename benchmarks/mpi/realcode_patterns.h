// Communication patterns of real applications, after the descriptions in DDTBench (Schneider,
// Gerstenberger, Hoefler, "Micro-Applications for Communication Data Access Patterns and MPI
// Datatypes", EuroMPI 2012): WRF halos, MILC su3 faces, NAS LU and MG faces, a 2D FFT transpose,
// SPECFEM3D interface points, LAMMPS ghost atoms. Written from those descriptions, not from the
// study's code. Each pattern states one message two ways: the application's own pack/unpack
// loops, and the derived datatypes an MPI programmer would build for the same data.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace realcode {

/** Where a message comes from and goes to: a buffer, a datatype and a count (per peer for a
 *  collective). Types built from absolute addresses use MPI_BOTTOM as the buffer. */
struct Message {
    void *send_buf = nullptr;
    MPI_Datatype send_type = MPI_DATATYPE_NULL;
    int send_count = 1;
    void *recv_buf = nullptr;
    MPI_Datatype recv_type = MPI_DATATYPE_NULL;
    int recv_count = 1;
};

/** One pattern at one size. All of its arrays live in one region of region_bytes() bytes
 *  (so a whole region can be filled and compared); the sender reads its source region, the
 *  receiver writes its destination region. */
class Pattern {
  public:
    Pattern(std::string name, std::string size) : name_(std::move(name)), size_(std::move(size)) {}
    virtual ~Pattern() = default;
    const std::string &name() const { return name_; }
    const std::string &size() const { return size_; }
    size_t region_bytes() const { return region_bytes_; }

    /** Collective patterns exchange with MPI_Alltoall (every rank sends to every rank);
     *  the others are a ping-pong between ranks 0 and 1. */
    virtual bool collective() const { return false; }

    /** Builds and commits (with MPI_Type_commit, so an interposer sees it) the datatypes of the
     *  message for these two regions; the caller frees them. */
    virtual Message make_types(char *src, char *dst) const = 0;

    /** Hand-packing as the application does it: bytes of the packed buffer (for a collective,
     *  all peers' blocks, peer after peer, each pack_bytes()/ranks long). */
    virtual size_t pack_bytes() const = 0;
    virtual void pack(const char *src, char *buf) const = 0;
    virtual void unpack(const char *buf, char *dst) const = 0;

    /** What `me`'s destination region must hold after one exchange, given every rank's source
     *  region; `out` holds the untouched destination on entry. Point to point: the peer's
     *  message unpacked by the hand loops. The derived-type variants are checked against this,
     *  so the loops and the datatypes (written separately) must agree byte for byte. */
    virtual void expected(char *out, const std::vector<const char *> &srcs, int me, int ranks) const;

  protected:
    size_t region_bytes_ = 0;

  private:
    std::string name_, size_;
};

/** Every pattern at the sizes whose index (0 = smallest; three sizes per pattern, four for NAS
 *  MG) has its bit set in `size_mask`. */
std::vector<std::unique_ptr<Pattern>> make_patterns(unsigned size_mask, int ranks);

} // namespace realcode
