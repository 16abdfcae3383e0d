// The patterns of realcode_patterns.h. Each class holds its geometry, its hand-packing loops (in
// the style of the application: element by element, the compiler vectorises them) and the
// datatypes an MPI programmer would build for the same message. Elements are copied as unsigned
// integers of their size, so floating-point values (NaN patterns included) travel bit for bit.
#include "realcode_patterns.h"

#include <cstdint>
#include <cstring>
#include <random>

namespace realcode {

void Pattern::expected(char *out, const std::vector<const char *> &srcs, int me, int) const {
    std::vector<char> buf(pack_bytes());
    pack(srcs[1 - me], buf.data());
    unpack(buf.data(), out);
}

namespace {

size_t align64(size_t n) {
    return (n + 63) & ~size_t(63);
}

MPI_Aint address(const void *p) {
    MPI_Aint a;
    MPI_Get_address(p, &a);
    return a;
}

MPI_Datatype commit(MPI_Datatype t) {
    MPI_Type_commit(&t);
    return t;
}

/** Up to four nested loops over elements: n[0] consecutive elements, then strides (elements). */
struct Box {
    size_t off = 0;
    int n[4] = {1, 1, 1, 1};
    size_t stride[4] = {1, 0, 0, 0};
    size_t elements() const { return size_t(n[0]) * n[1] * n[2] * n[3]; }
};

template <class T> T *pack_box(const T *a, const Box &b, T *out) {
    for (int l = 0; l < b.n[3]; ++l)
        for (int k = 0; k < b.n[2]; ++k)
            for (int j = 0; j < b.n[1]; ++j) {
                const T *row = a + b.off + l * b.stride[3] + k * b.stride[2] + j * b.stride[1];
                for (int i = 0; i < b.n[0]; ++i)
                    *out++ = row[i];
            }
    return out;
}
template <class T> const T *unpack_box(const T *in, const Box &b, T *a) {
    for (int l = 0; l < b.n[3]; ++l)
        for (int k = 0; k < b.n[2]; ++k)
            for (int j = 0; j < b.n[1]; ++j) {
                T *row = a + b.off + l * b.stride[3] + k * b.stride[2] + j * b.stride[1];
                for (int i = 0; i < b.n[0]; ++i)
                    row[i] = *in++;
            }
    return in;
}

/** Patterns whose message is one box per array (halos and faces of structured grids). */
template <class T> class BoxPattern : public Pattern {
  public:
    using Pattern::Pattern;
    size_t pack_bytes() const override {
        size_t n = 0;
        for (const Field &f : fields_)
            n += f.send.elements();
        return n * sizeof(T);
    }
    void pack(const char *src, char *buf) const override {
        T *out = reinterpret_cast<T *>(buf);
        for (const Field &f : fields_)
            out = pack_box(reinterpret_cast<const T *>(src + f.offset), f.send, out);
    }
    void unpack(const char *buf, char *dst) const override {
        const T *in = reinterpret_cast<const T *>(buf);
        for (const Field &f : fields_)
            in = unpack_box(in, f.recv, reinterpret_cast<T *>(dst + f.offset));
    }

  protected:
    struct Field {
        size_t offset;                      // bytes into the region
        Box send, recv;                     // the sender's and the receiver's part of this array
        int dims[4];                        // the array's extents, Fortran order (trailing 1s unused)
        int send_at[4], recv_at[4], sub[4]; // subarray starts and subsizes
    };
    std::vector<Field> fields_;
};

// ---------------------------------------------------------------------------------------------
// WRF: the halo exchange sends several fields in one message — 2D (i,j), 3D (i,k,j) and 4D
// (i,k,j,species) arrays of REAL (float), WRF's IKJ memory order — a strip `w` wide of each.
// x: the last w interior columns in i, all k, interior j; y: the last w interior rows in j, all
// k, interior i. One datatype per field (nested vectors, or subarrays of the whole array), all
// joined in a struct of absolute addresses sent from MPI_BOTTOM.
class Wrf : public BoxPattern<uint32_t> {
  public:
    Wrf(bool y_dir, bool subarray, int nx, int ny, int nz)
        : BoxPattern(std::string("WRF_") + (y_dir ? "y" : "x") + (subarray ? "_sa" : "_vec"),
                     std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz)),
          subarray_(subarray) {
        const int w = 3, X = nx + 2 * w, Y = ny + 2 * w;
        // One 2D field, three 3D fields, one 4D field of 4 moisture species.
        const int kinds[5][2] = {{1, 1}, {nz, 1}, {nz, 1}, {nz, 1}, {nz, 4}};
        size_t offset = 0;
        for (const auto &kind : kinds) {
            const int nk = kind[0], ns = kind[1];
            Field f{};
            f.offset = offset;
            const int dims[4] = {X, nk, Y, ns};
            std::memcpy(f.dims, dims, sizeof dims);
            const size_t strides[4] = {1, size_t(X), size_t(X) * nk, size_t(X) * nk * Y};
            // Box corners (i, k, j, s) of the sender's strip and the receiver's halo.
            int send_at[4], recv_at[4], sub[4];
            if (!y_dir) {
                int s[4] = {nx, 0, w, 0}, r[4] = {0, 0, w, 0}, z[4] = {w, nk, ny, ns};
                std::memcpy(send_at, s, sizeof s), std::memcpy(recv_at, r, sizeof r),
                    std::memcpy(sub, z, sizeof z);
            } else {
                int s[4] = {w, 0, ny, 0}, r[4] = {w, 0, 0, 0}, z[4] = {nx, nk, w, ns};
                std::memcpy(send_at, s, sizeof s), std::memcpy(recv_at, r, sizeof r),
                    std::memcpy(sub, z, sizeof z);
            }
            std::memcpy(f.send_at, send_at, sizeof send_at);
            std::memcpy(f.recv_at, recv_at, sizeof recv_at);
            std::memcpy(f.sub, sub, sizeof sub);
            for (int d = 0; d < 4; ++d) {
                f.send.n[d] = f.recv.n[d] = sub[d];
                f.send.stride[d] = f.recv.stride[d] = strides[d];
                f.send.off += send_at[d] * strides[d];
                f.recv.off += recv_at[d] * strides[d];
            }
            fields_.push_back(f);
            offset += align64(sizeof(uint32_t) * X * nk * Y * ns);
        }
        region_bytes_ = offset;
    }

    Message make_types(char *src, char *dst) const override {
        Message m;
        m.send_buf = m.recv_buf = MPI_BOTTOM;
        m.send_type = joined(src, true);
        m.recv_type = joined(dst, false);
        return m;
    }

  private:
    /** The type of one field's strip, displacements relative to where it is placed. */
    MPI_Datatype field_type(const Field &f, bool send) const {
        MPI_Datatype t;
        if (subarray_) {
            // Subarray of the whole array, trivial dimensions left out as the application would.
            int sizes[4], subs[4], starts[4], nd = 0;
            for (int d = 0; d < 4; ++d)
                if (f.dims[d] > 1) {
                    sizes[nd] = f.dims[d], subs[nd] = f.sub[d];
                    starts[nd++] = send ? f.send_at[d] : f.recv_at[d];
                }
            MPI_Type_create_subarray(nd, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &t);
            return t;
        }
        // Nested vectors from the strip's origin: rows of n[0] over k, then j (then species).
        const Box &b = send ? f.send : f.recv;
        const MPI_Aint e = sizeof(float);
        if (b.n[1] == 1) { // a 2D field: one vector over j
            MPI_Type_vector(b.n[2], b.n[0], static_cast<int>(b.stride[2]), MPI_FLOAT, &t);
        } else {
            MPI_Datatype k_rows;
            MPI_Type_vector(b.n[1], b.n[0], static_cast<int>(b.stride[1]), MPI_FLOAT, &k_rows);
            MPI_Type_create_hvector(b.n[2], 1, e * b.stride[2], k_rows, &t);
            MPI_Type_free(&k_rows);
        }
        if (b.n[3] > 1) {
            MPI_Datatype per_species = t;
            MPI_Type_create_hvector(b.n[3], 1, e * b.stride[3], per_species, &t);
            MPI_Type_free(&per_species);
        }
        return t;
    }
    MPI_Datatype joined(char *region, bool send) const {
        std::vector<MPI_Datatype> types;
        std::vector<MPI_Aint> where;
        std::vector<int> ones(fields_.size(), 1);
        for (const Field &f : fields_) {
            types.push_back(field_type(f, send));
            const char *base = region + f.offset;
            where.push_back(
                address(subarray_ ? base : base + sizeof(uint32_t) * (send ? f.send : f.recv).off));
        }
        MPI_Datatype t;
        MPI_Type_create_struct(static_cast<int>(types.size()), ones.data(), where.data(), types.data(), &t);
        for (MPI_Datatype &ft : types)
            MPI_Type_free(&ft);
        return commit(t);
    }
    bool subarray_;
};

// ---------------------------------------------------------------------------------------------
// MILC: a 4D lattice (x fastest, then y, z, t) of su3 vectors (3 single-precision complex
// numbers, 24 bytes). The z-down gather sends the z = 0 face: per t, ny rows of nx sites. The
// application's type: su3 = 6 floats, a vector of ny rows of nx su3, an hvector of those over t.
// The receiver's copy lands in an extra plane z = nz (its ghost plane).
class Milc : public BoxPattern<uint32_t> {
  public:
    Milc(int nx, int ny, int nz, int nt)
        : BoxPattern("MILC_su3_zd", std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                                        "x" + std::to_string(nt)),
          nx_(nx), ny_(ny), nt_(nt) {
        const size_t site = 6, row = site * nx, plane = row * ny, slab = plane * (nz + 1);
        Field f{};
        f.send.n[0] = f.recv.n[0] = static_cast<int>(row);
        f.send.n[1] = f.recv.n[1] = ny;
        f.send.n[2] = f.recv.n[2] = nt;
        f.send.stride[1] = f.recv.stride[1] = row;
        f.send.stride[2] = f.recv.stride[2] = slab;
        f.recv.off = plane * nz;
        fields_.push_back(f);
        slab_bytes_ = slab * sizeof(float);
        region_bytes_ = align64(slab_bytes_ * nt);
    }
    Message make_types(char *src, char *dst) const override {
        MPI_Datatype su3, rows, face;
        MPI_Type_contiguous(6, MPI_FLOAT, &su3);
        MPI_Type_vector(ny_, nx_, nx_, su3, &rows);
        MPI_Type_create_hvector(nt_, 1, static_cast<MPI_Aint>(slab_bytes_), rows, &face);
        MPI_Type_free(&su3);
        MPI_Type_free(&rows);
        Message m;
        m.send_type = m.recv_type = commit(face);
        m.send_buf = src;
        m.recv_buf = dst + fields_[0].recv.off * sizeof(float);
        return m;
    }

  private:
    int nx_, ny_, nt_;
    size_t slab_bytes_;
};

// ---------------------------------------------------------------------------------------------
// NAS LU: the SSOR sweep passes a line of 5-component vectors (doubles) of a plane g(5, X, Y)
// (X = Y = n + 2 with the ghost layer). x: the line at y = n — contiguous in memory (the
// application copies it anyway); y: the line at x = n — n blocks of 5 doubles, X*5 apart.
class NasLu : public BoxPattern<uint64_t> {
  public:
    NasLu(bool y_dir, int n)
        : BoxPattern(y_dir ? "NAS_LU_y" : "NAS_LU_x", std::to_string(n)), y_(y_dir), n_(n) {
        const size_t X = n + 2;
        Field f{};
        if (!y_dir) { // (1..n, y): 5n consecutive doubles
            f.send.n[0] = f.recv.n[0] = 5 * n;
            f.send.off = 5 * (1 + X * n);
            f.recv.off = 5 * 1;
        } else { // (x, 1..n): n blocks of 5
            f.send.n[0] = f.recv.n[0] = 5;
            f.send.n[1] = f.recv.n[1] = n;
            f.send.stride[1] = f.recv.stride[1] = 5 * X;
            f.send.off = 5 * (n + X);
            f.recv.off = 5 * X;
        }
        fields_.push_back(f);
        region_bytes_ = align64(sizeof(double) * 5 * X * X);
    }
    Message make_types(char *src, char *dst) const override {
        MPI_Datatype five, t;
        MPI_Type_contiguous(5, MPI_DOUBLE, &five);
        if (y_)
            MPI_Type_vector(n_, 1, n_ + 2, five, &t);
        else
            MPI_Type_contiguous(n_, five, &t);
        MPI_Type_free(&five);
        Message m;
        m.send_type = m.recv_type = commit(t);
        m.send_buf = src + fields_[0].send.off * sizeof(double);
        m.recv_buf = dst + fields_[0].recv.off * sizeof(double);
        return m;
    }

  private:
    bool y_;
    int n_;
};

// ---------------------------------------------------------------------------------------------
// NAS MG: comm3 exchanges the faces of a grid u(N, N, N) of doubles, N = n + 2, i1 fastest.
// x: i1 = n, i2 and i3 interior — n*n single doubles (a vector of stride N inside an hvector of
// stride N*N); y: i2 = n, all i1, interior i3 — n rows of N doubles N*N apart; z: i3 = n, all
// i1 and i2 — one contiguous plane. The receiver's face is the ghost layer at index 0.
class NasMg : public BoxPattern<uint64_t> {
  public:
    NasMg(char axis, int n)
        : BoxPattern(std::string("NAS_MG_") + axis, std::to_string(n)), axis_(axis), n_(n) {
        const size_t N = n + 2;
        Field f{};
        if (axis == 'x') {
            f.send.n[1] = f.recv.n[1] = n, f.send.n[2] = f.recv.n[2] = n;
            f.send.stride[1] = f.recv.stride[1] = N, f.send.stride[2] = f.recv.stride[2] = N * N;
            f.send.off = n + N * (1 + N);
            f.recv.off = 0 + N * (1 + N);
        } else if (axis == 'y') {
            f.send.n[0] = f.recv.n[0] = static_cast<int>(N), f.send.n[1] = f.recv.n[1] = n;
            f.send.stride[1] = f.recv.stride[1] = N * N;
            f.send.off = N * (n + N);
            f.recv.off = N * (0 + N);
        } else {
            f.send.n[0] = f.recv.n[0] = static_cast<int>(N * N);
            f.send.off = N * N * n;
            f.recv.off = 0;
        }
        fields_.push_back(f);
        region_bytes_ = align64(sizeof(double) * N * N * N);
    }
    Message make_types(char *src, char *dst) const override {
        const int N = n_ + 2;
        MPI_Datatype t;
        if (axis_ == 'x') {
            MPI_Datatype column;
            MPI_Type_vector(n_, 1, N, MPI_DOUBLE, &column);
            MPI_Type_create_hvector(n_, 1, static_cast<MPI_Aint>(sizeof(double)) * N * N, column, &t);
            MPI_Type_free(&column);
        } else if (axis_ == 'y') {
            MPI_Type_vector(n_, N, N * N, MPI_DOUBLE, &t);
        } else {
            MPI_Type_contiguous(N * N, MPI_DOUBLE, &t);
        }
        Message m;
        m.send_type = m.recv_type = commit(t);
        m.send_buf = src + fields_[0].send.off * sizeof(double);
        m.recv_buf = dst + fields_[0].recv.off * sizeof(double);
        return m;
    }

  private:
    char axis_;
    int n_;
};

// ---------------------------------------------------------------------------------------------
// 2D FFT: an N x N matrix of double complex distributed by rows (each rank b = N/P rows); the
// transpose between the two 1D FFT passes is one MPI_Alltoall. Derived types do the transpose in
// the exchange: each peer's block (b rows of b elements, N apart) is a vector resized to b
// elements, and the receiver scatters the block's rows into columns (a column vector resized to
// one element, b of them, resized to b elements). By hand: pack the blocks, Alltoall the
// contiguous bytes, unpack transposing.
class Fft2d : public Pattern {
  public:
    Fft2d(int n, int ranks) : Pattern("FFT2_transpose", std::to_string(n)), n_(n), p_(ranks), b_(n / ranks) {
        region_bytes_ = align64(kElem * b_ * n_);
    }
    bool collective() const override { return true; }
    size_t pack_bytes() const override { return kElem * b_ * n_; }
    void pack(const char *src, char *buf) const override {
        const Cplx *a = reinterpret_cast<const Cplx *>(src);
        Cplx *out = reinterpret_cast<Cplx *>(buf);
        for (int q = 0; q < p_; ++q)
            for (int r = 0; r < b_; ++r)
                for (int c = 0; c < b_; ++c)
                    *out++ = a[size_t(r) * n_ + size_t(q) * b_ + c];
    }
    void unpack(const char *buf, char *dst) const override {
        const Cplx *in = reinterpret_cast<const Cplx *>(buf);
        Cplx *a = reinterpret_cast<Cplx *>(dst);
        for (int q = 0; q < p_; ++q)
            for (int r = 0; r < b_; ++r)
                for (int c = 0; c < b_; ++c)
                    a[size_t(c) * n_ + size_t(q) * b_ + r] = *in++;
    }
    void expected(char *out, const std::vector<const char *> &srcs, int me, int ranks) const override {
        const size_t block = kElem * b_ * b_;
        std::vector<char> packed(pack_bytes()), received(pack_bytes());
        for (int q = 0; q < ranks; ++q) {
            pack(srcs[q], packed.data());
            std::memcpy(received.data() + q * block, packed.data() + me * block, block);
        }
        unpack(received.data(), out);
    }
    Message make_types(char *src, char *dst) const override {
        const MPI_Aint e = kElem;
        MPI_Datatype block, column, columns;
        Message m;
        MPI_Type_vector(b_, b_, n_, MPI_C_DOUBLE_COMPLEX, &block);
        MPI_Type_create_resized(block, 0, e * b_, &m.send_type);
        MPI_Type_vector(b_, 1, n_, MPI_C_DOUBLE_COMPLEX, &column);
        MPI_Type_free(&block);
        MPI_Type_create_resized(column, 0, e, &block);
        MPI_Type_contiguous(b_, block, &columns);
        MPI_Type_create_resized(columns, 0, e * b_, &m.recv_type);
        MPI_Type_free(&column);
        MPI_Type_free(&block);
        MPI_Type_free(&columns);
        m.send_type = commit(m.send_type);
        m.recv_type = commit(m.recv_type);
        m.send_buf = src;
        m.recv_buf = dst;
        return m;
    }

  private:
    struct Cplx {
        uint64_t re, im;
    };
    static constexpr size_t kElem = sizeof(Cplx);
    int n_, p_, b_;
};

/** `count` distinct sorted indices in [0, range): a regular spread with random jitter, like the
 *  points of a mesh interface or the atoms near a subdomain face (same on every rank). */
std::vector<int> spread_indices(int count, int range, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<int> idx(count);
    const int gap = range / count;
    for (int i = 0; i < count; ++i)
        idx[i] = i * gap + static_cast<int>(rng() % static_cast<unsigned>(gap));
    return idx;
}

// ---------------------------------------------------------------------------------------------
// SPECFEM3D_GLOBE: assembling the values on the points shared with a neighbour slice; the
// interface points are an index list into the slice's global points (CUSTOM_REAL = float).
// oc: outer core, one scalar per point (indexed_block of floats); cm: crust/mantle, a 3-vector per
// point (indexed_block of a 3-float contiguous type); mt: the three regions in one message, a
// struct of absolute addresses over crust/mantle (n points x 3), inner core (n/4 x 3) and outer
// core (n/2 x 1). The receiver's values land on the same points of its arrays.
class Specfem : public Pattern {
  public:
    Specfem(const std::string &kind, int npts)
        : Pattern("SPECFEM3D_" + kind, std::to_string(npts)), kind_(kind) {
        auto add = [this](int pts, int comps, unsigned seed) {
            Part p;
            p.comps = comps;
            p.nglob = 10 * pts;
            p.idx = spread_indices(pts, p.nglob, seed);
            p.offset = region_bytes_;
            region_bytes_ += align64(sizeof(float) * comps * p.nglob);
            parts_.push_back(std::move(p));
        };
        if (kind == "oc") {
            add(npts, 1, 11);
        } else if (kind == "cm") {
            add(npts, 3, 12);
        } else {
            add(npts, 3, 13);
            add(npts / 4, 3, 14);
            add(npts / 2, 1, 15);
        }
    }
    size_t pack_bytes() const override {
        size_t n = 0;
        for (const Part &p : parts_)
            n += p.idx.size() * p.comps * sizeof(float);
        return n;
    }
    void pack(const char *src, char *buf) const override {
        uint32_t *out = reinterpret_cast<uint32_t *>(buf);
        for (const Part &p : parts_) {
            const uint32_t *a = reinterpret_cast<const uint32_t *>(src + p.offset);
            for (int i : p.idx)
                for (int c = 0; c < p.comps; ++c)
                    *out++ = a[size_t(i) * p.comps + c];
        }
    }
    void unpack(const char *buf, char *dst) const override {
        const uint32_t *in = reinterpret_cast<const uint32_t *>(buf);
        for (const Part &p : parts_) {
            uint32_t *a = reinterpret_cast<uint32_t *>(dst + p.offset);
            for (int i : p.idx)
                for (int c = 0; c < p.comps; ++c)
                    a[size_t(i) * p.comps + c] = *in++;
        }
    }
    Message make_types(char *src, char *dst) const override {
        Message m;
        if (parts_.size() == 1) {
            m.send_type = m.recv_type = commit(part_type(parts_[0]));
            m.send_buf = src;
            m.recv_buf = dst;
        } else {
            m.send_buf = m.recv_buf = MPI_BOTTOM;
            m.send_type = joined(src);
            m.recv_type = joined(dst);
        }
        return m;
    }

  private:
    struct Part {
        int comps, nglob;
        std::vector<int> idx;
        size_t offset;
    };
    static MPI_Datatype part_type(const Part &p) {
        MPI_Datatype point, t;
        if (p.comps == 1) {
            MPI_Type_create_indexed_block(static_cast<int>(p.idx.size()), 1, p.idx.data(), MPI_FLOAT, &t);
        } else {
            MPI_Type_contiguous(p.comps, MPI_FLOAT, &point);
            MPI_Type_create_indexed_block(static_cast<int>(p.idx.size()), 1, p.idx.data(), point, &t);
            MPI_Type_free(&point);
        }
        return t;
    }
    MPI_Datatype joined(char *region) const {
        std::vector<MPI_Datatype> types;
        std::vector<MPI_Aint> where;
        std::vector<int> ones(parts_.size(), 1);
        for (const Part &p : parts_) {
            types.push_back(part_type(p));
            where.push_back(address(region + p.offset));
        }
        MPI_Datatype t;
        MPI_Type_create_struct(static_cast<int>(types.size()), ones.data(), where.data(), types.data(), &t);
        for (MPI_Datatype &pt : types)
            MPI_Type_free(&pt);
        return commit(t);
    }
    std::string kind_;
    std::vector<Part> parts_;
};

// ---------------------------------------------------------------------------------------------
// LAMMPS: the border exchange sends the atoms of a send list (indices into per-atom arrays) to
// the neighbour, which appends them as ghosts after its own atoms. atomic: x (3 doubles), tag,
// type, mask (ints); full: also charge q (double) and molecule (int). By hand, as LAMMPS's
// pack_border: one record of doubles per atom, the ints stored bit for bit in 64-bit slots.
// Derived types: a struct of absolute addresses over one indexed_block per array (sender) and
// one contiguous run per array from the first ghost slot (receiver).
class Lammps : public Pattern {
  public:
    Lammps(bool full, int nsend)
        : Pattern(full ? "LAMMPS_full" : "LAMMPS_atomic", std::to_string(nsend)), full_(full), nsend_(nsend),
          nmax_(4 * nsend), first_(nmax_ - nsend) {
        list_ = spread_indices(nsend, first_, full ? 22 : 21);
        x_ = reserve(sizeof(double) * 3 * nmax_);
        tag_ = reserve(sizeof(int) * nmax_);
        type_ = reserve(sizeof(int) * nmax_);
        mask_ = reserve(sizeof(int) * nmax_);
        if (full) {
            q_ = reserve(sizeof(double) * nmax_);
            molecule_ = reserve(sizeof(int) * nmax_);
        }
    }
    size_t pack_bytes() const override { return sizeof(double) * record() * nsend_; }
    void pack(const char *src, char *buf) const override {
        const View v = view(const_cast<char *>(src));
        uint64_t *out = reinterpret_cast<uint64_t *>(buf);
        for (int j : list_) {
            *out++ = v.x[3 * size_t(j)];
            *out++ = v.x[3 * size_t(j) + 1];
            *out++ = v.x[3 * size_t(j) + 2];
            *out++ = widen(v.tag[j]);
            *out++ = widen(v.type[j]);
            *out++ = widen(v.mask[j]);
            if (full_) {
                *out++ = v.q[j];
                *out++ = widen(v.molecule[j]);
            }
        }
    }
    void unpack(const char *buf, char *dst) const override {
        const View v = view(dst);
        const uint64_t *in = reinterpret_cast<const uint64_t *>(buf);
        for (int i = first_; i < first_ + nsend_; ++i) {
            v.x[3 * size_t(i)] = *in++;
            v.x[3 * size_t(i) + 1] = *in++;
            v.x[3 * size_t(i) + 2] = *in++;
            v.tag[i] = narrow(*in++);
            v.type[i] = narrow(*in++);
            v.mask[i] = narrow(*in++);
            if (full_) {
                v.q[i] = *in++;
                v.molecule[i] = narrow(*in++);
            }
        }
    }
    Message make_types(char *src, char *dst) const override {
        Message m;
        m.send_buf = m.recv_buf = MPI_BOTTOM;
        m.send_type = joined(src, true);
        m.recv_type = joined(dst, false);
        return m;
    }

  private:
    struct View {
        uint64_t *x, *q;
        int32_t *tag, *type, *mask, *molecule;
    };
    size_t reserve(size_t bytes) {
        size_t at = region_bytes_;
        region_bytes_ += align64(bytes);
        return at;
    }
    View view(char *r) const {
        return {reinterpret_cast<uint64_t *>(r + x_),
                full_ ? reinterpret_cast<uint64_t *>(r + q_) : nullptr,
                reinterpret_cast<int32_t *>(r + tag_),
                reinterpret_cast<int32_t *>(r + type_),
                reinterpret_cast<int32_t *>(r + mask_),
                full_ ? reinterpret_cast<int32_t *>(r + molecule_) : nullptr};
    }
    int record() const { return full_ ? 8 : 6; }
    // ubuf-style: an int travels as a 64-bit integer in a double's slot.
    static uint64_t widen(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
    static int32_t narrow(uint64_t v) { return static_cast<int32_t>(static_cast<int64_t>(v)); }

    MPI_Datatype joined(char *r, bool send) const {
        struct Array {
            size_t offset;
            MPI_Datatype elem;
            int per_atom;
        };
        std::vector<Array> arrays = {
            {x_, MPI_DOUBLE, 3}, {tag_, MPI_INT, 1}, {type_, MPI_INT, 1}, {mask_, MPI_INT, 1}};
        if (full_) {
            arrays.push_back({q_, MPI_DOUBLE, 1});
            arrays.push_back({molecule_, MPI_INT, 1});
        }
        std::vector<MPI_Datatype> types;
        std::vector<MPI_Aint> where;
        std::vector<int> ones(arrays.size(), 1);
        for (const Array &a : arrays) {
            MPI_Datatype atom, t;
            MPI_Type_contiguous(a.per_atom, a.elem, &atom);
            int elem_size;
            MPI_Type_size(a.elem, &elem_size);
            if (send) {
                MPI_Type_create_indexed_block(nsend_, 1, list_.data(), atom, &t);
                where.push_back(address(r + a.offset));
            } else {
                MPI_Type_contiguous(nsend_, atom, &t);
                where.push_back(address(r + a.offset + size_t(elem_size) * a.per_atom * first_));
            }
            MPI_Type_free(&atom);
            types.push_back(t);
        }
        MPI_Datatype t;
        MPI_Type_create_struct(static_cast<int>(types.size()), ones.data(), where.data(), types.data(), &t);
        for (MPI_Datatype &at : types)
            MPI_Type_free(&at);
        return commit(t);
    }

    bool full_;
    int nsend_, nmax_, first_;
    std::vector<int> list_;
    size_t x_ = 0, tag_ = 0, type_ = 0, mask_ = 0, q_ = 0, molecule_ = 0;
};

} // namespace

std::vector<std::unique_ptr<Pattern>> make_patterns(unsigned size_mask, int ranks) {
    std::vector<std::unique_ptr<Pattern>> out;
    auto pick = [size_mask](int i) { return (size_mask >> i) & 1u; };
    struct Dims {
        int a, b, c, d;
    };
    const Dims wrf[] = {{16, 16, 8, 0}, {48, 48, 24, 0}, {128, 128, 40, 0}};
    for (int dir = 0; dir < 2; ++dir)
        for (int sa = 0; sa < 2; ++sa)
            for (int i = 0; i < 3; ++i)
                if (pick(i))
                    out.push_back(std::make_unique<Wrf>(dir, sa, wrf[i].a, wrf[i].b, wrf[i].c));
    const Dims milc[] = {{4, 4, 4, 4}, {8, 8, 8, 8}, {16, 16, 16, 16}};
    for (int i = 0; i < 3; ++i)
        if (pick(i))
            out.push_back(std::make_unique<Milc>(milc[i].a, milc[i].b, milc[i].c, milc[i].d));
    const int lu[] = {64, 200, 600};
    for (int dir = 0; dir < 2; ++dir)
        for (int i = 0; i < 3; ++i)
            if (pick(i))
                out.push_back(std::make_unique<NasLu>(dir, lu[i]));
    const int mg[] = {16, 32, 64, 128};
    for (char axis : {'x', 'y', 'z'})
        for (int i = 0; i < 4; ++i)
            if (pick(i))
                out.push_back(std::make_unique<NasMg>(axis, mg[i]));
    const int fft[] = {128, 512, 1024};
    for (int i = 0; i < 3; ++i)
        if (pick(i) && fft[i] % ranks == 0)
            out.push_back(std::make_unique<Fft2d>(fft[i], ranks));
    const int specfem[] = {1000, 8000, 40000};
    for (const char *kind : {"oc", "cm", "mt"})
        for (int i = 0; i < 3; ++i)
            if (pick(i))
                out.push_back(std::make_unique<Specfem>(kind, specfem[i]));
    const int lammps[] = {500, 4000, 20000};
    for (int full = 0; full < 2; ++full)
        for (int i = 0; i < 3; ++i)
            if (pick(i))
                out.push_back(std::make_unique<Lammps>(full, lammps[i]));
    return out;
}

} // namespace realcode
