! A Fortran program exchanging strided matrix rows, a Fortran-order subarray and
! a matrix column between two ranks: blocking and nonblocking calls,
! MPI_WAITANY/MPI_TESTSOME (1-based indices), persistent requests,
! MPI_PACK/MPI_UNPACK; every element is checked. Built twice: with `use mpi`,
! and with -DKUPL_F08 with `use mpi_f08` (derived-type handles and statuses,
! plus calls that leave the optional ierror out). Under the interposer the
! statistics must show the strided ones were accelerated.
program fortran_matrix
#ifdef KUPL_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: n = 300
  double precision, allocatable :: a(:, :), b(:, :)
  integer :: rank, nranks, peer, ierr, i, j, pos, cnt, idx, idx3(3), outcount, done, k
#ifdef KUPL_F08
  type(MPI_Datatype) :: rowtype, blocktype, coltype
  type(MPI_Request) :: req(2), req3(3)
  type(MPI_Status) :: st, sts(2), sts3(3)
#else
  integer :: rowtype, blocktype, coltype, req(2), req3(3)
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2), sts3(MPI_STATUS_SIZE, 3)
#endif
  integer :: sizes(2), subsizes(2), starts(2)
  character, allocatable :: packed(:)
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 2) call fail('run with 2 ranks')
  peer = 1 - rank
  allocate(a(n, n), b(n, n))
  do j = 1, n
    do i = 1, n
      a(i, j) = value(rank, i, j)
    end do
  end do
  b = -1d0

  ! A matrix row is strided in Fortran: n elements, n apart.
  call MPI_TYPE_VECTOR(n, 1, n, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_TYPE_COMMIT(rowtype, ierr)

  ! 1. Blocking: rank 0's row 7 becomes rank 1's row 11; the status counts one row.
  if (rank == 0) then
    call MPI_SEND(a(7, 1), 1, rowtype, 1, 1, MPI_COMM_WORLD, ierr)
  else
    call MPI_RECV(b(11, 1), 1, rowtype, 0, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_GET_COUNT(st, rowtype, cnt, ierr)
#ifdef KUPL_F08
    if (cnt /= 1 .or. st%MPI_SOURCE /= 0) call fail('recv status')
#else
    if (cnt /= 1 .or. st(MPI_SOURCE) /= 0) call fail('recv status')
#endif
    do j = 1, n
      if (.not. same(b(11, j), value(0, 7, j))) call fail('blocking row')
      if (.not. same(b(10, j), -1d0) .or. .not. same(b(12, j), -1d0)) call fail('neighbour rows written')
    end do
  end if

  ! 2. Nonblocking both ways with a Fortran-order 40x50 subarray, completed by MPI_WAITALL.
  sizes = (/ n, n /)
  subsizes = (/ 40, 50 /)
  starts = (/ 3, 5 /)
  call MPI_TYPE_CREATE_SUBARRAY(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, &
                                blocktype, ierr)
  call MPI_TYPE_COMMIT(blocktype, ierr)
  b = -1d0
  call MPI_IRECV(b, 1, blocktype, peer, 2, MPI_COMM_WORLD, req(1), ierr)
  call MPI_ISEND(a, 1, blocktype, peer, 2, MPI_COMM_WORLD, req(2), ierr)
  call MPI_WAITALL(2, req, sts, ierr)
  if (req(1) /= MPI_REQUEST_NULL .or. req(2) /= MPI_REQUEST_NULL) call fail('requests not freed')
  do j = 1, n
    do i = 1, n
      if (i >= 4 .and. i <= 43 .and. j >= 6 .and. j <= 55) then
        if (.not. same(b(i, j), value(peer, i, j))) call fail('subarray element')
      else
        if (.not. same(b(i, j), -1d0)) call fail('element outside the subarray written')
      end if
    end do
  end do

  ! 3. A row with MPI_IRECV + MPI_TEST polling, statuses ignored.
  b = -1d0
  call MPI_IRECV(b(2, 1), 1, rowtype, peer, 3, MPI_COMM_WORLD, req(1), ierr)
  call MPI_SEND(a(5, 1), 1, rowtype, peer, 3, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(req(1), flag, MPI_STATUS_IGNORE, ierr)
  end do
  do j = 1, n
    if (.not. same(b(2, j), value(peer, 5, j))) call fail('tested row')
  end do

  ! 4. MPI_PACK / MPI_UNPACK of a row round trip.
  allocate(packed(8 * n))
  pos = 0
  call MPI_PACK(a(9, 1), 1, rowtype, packed, 8 * n, pos, MPI_COMM_WORLD, ierr)
  if (pos /= 8 * n) call fail('pack position')
  b = -1d0
  pos = 0
  call MPI_UNPACK(packed, 8 * n, pos, b(1, 1), 1, rowtype, MPI_COMM_WORLD, ierr)
  do j = 1, n
    if (.not. same(b(1, j), value(rank, 9, j))) call fail('unpacked row')
  end do

  ! 5. Three rows in flight, completed by MPI_WAITANY (1-based indices) and MPI_TESTSOME.
  b = -1d0
  do k = 1, 3
    call MPI_IRECV(b(k, 1), 1, rowtype, peer, 10 + k, MPI_COMM_WORLD, req3(k), ierr)
  end do
  do k = 3, 1, -1
    call MPI_SEND(a(20 + k, 1), 1, rowtype, peer, 10 + k, MPI_COMM_WORLD, ierr)
  end do
  call MPI_WAITANY(3, req3, idx, st, ierr)
#ifdef KUPL_F08
  if (idx < 1 .or. idx > 3 .or. st%MPI_TAG /= 10 + idx .or. req3(idx) /= MPI_REQUEST_NULL) &
    call fail('waitany index')
#else
  if (idx < 1 .or. idx > 3 .or. st(MPI_TAG) /= 10 + idx .or. req3(idx) /= MPI_REQUEST_NULL) &
    call fail('waitany index')
#endif
  done = 1
  do while (done < 3)
    call MPI_TESTSOME(3, req3, outcount, idx3, sts3, ierr)
    if (outcount == MPI_UNDEFINED) exit
    do k = 1, outcount
#ifdef KUPL_F08
      if (idx3(k) < 1 .or. idx3(k) > 3 .or. sts3(k)%MPI_TAG /= 10 + idx3(k)) call fail('testsome index')
#else
      if (idx3(k) < 1 .or. idx3(k) > 3 .or. sts3(MPI_TAG, k) /= 10 + idx3(k)) call fail('testsome index')
#endif
    end do
    done = done + outcount
  end do
  do k = 1, 3
    if (req3(k) /= MPI_REQUEST_NULL) call fail('request left after testsome')
    do j = 1, n
      if (.not. same(b(k, j), value(peer, 20 + k, j))) call fail('waitany/testsome row')
    end do
  end do

  ! 6. Persistent row send and receive, restarted with MPI_START and MPI_STARTALL, then freed.
  call MPI_SEND_INIT(a(30, 1), 1, rowtype, peer, 20, MPI_COMM_WORLD, req(1), ierr)
  call MPI_RECV_INIT(b(30, 1), 1, rowtype, peer, 20, MPI_COMM_WORLD, req(2), ierr)
  do k = 1, 3
    a(30, :) = a(30, :) + 1d0
    b = -1d0
    if (k == 2) then
      call MPI_START(req(2), ierr)
      call MPI_START(req(1), ierr)
    else
      call MPI_STARTALL(2, req, ierr)
    end if
    call MPI_WAITALL(2, req, sts, ierr)
    do j = 1, n
      if (.not. same(b(30, j), value(peer, 30, j) + k)) call fail('persistent row')
    end do
  end do
  call MPI_REQUEST_FREE(req(1), ierr)
  call MPI_REQUEST_FREE(req(2), ierr)
  if (req(1) /= MPI_REQUEST_NULL .or. req(2) /= MPI_REQUEST_NULL) call fail('persistent requests not freed')
  do j = 1, n
    a(30, j) = value(rank, 30, j)
  end do

  ! 7. A matrix column: contiguous in Fortran, so the interposer must leave it to Open MPI
  !    (its statistics count it under "contiguous") and the data must still arrive.
  subsizes = (/ n, 1 /)
  starts = (/ 0, 12 /)
  call MPI_TYPE_CREATE_SUBARRAY(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, &
                                coltype, ierr)
  call MPI_TYPE_COMMIT(coltype, ierr)
  b = -1d0
  call MPI_SENDRECV(a, 1, coltype, peer, 5, b, 1, coltype, peer, 5, MPI_COMM_WORLD, st, ierr)
  do i = 1, n
    if (.not. same(b(i, 13), value(peer, i, 13))) call fail('column')
    if (.not. same(b(i, 12), -1d0)) call fail('column neighbour written')
  end do
  call MPI_TYPE_FREE(coltype, ierr)

#ifdef KUPL_F08
  ! 8. mpi_f08 lets ierror out: the bindings then pass no pointer for it.
  b = -1d0
  call MPI_IRECV(b(40, 1), 1, rowtype, peer, 30, MPI_COMM_WORLD, req(1))
  call MPI_ISEND(a(41, 1), 1, rowtype, peer, 30, MPI_COMM_WORLD, req(2))
  call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE)
  call MPI_SENDRECV(a(42, 1), 1, rowtype, peer, 31, b(43, 1), 1, rowtype, peer, 31, MPI_COMM_WORLD, st)
  if (st%MPI_TAG /= 31) call fail('sendrecv status without ierror')
  do j = 1, n
    if (.not. same(b(40, j), value(peer, 41, j))) call fail('row without ierror')
    if (.not. same(b(43, j), value(peer, 42, j))) call fail('sendrecv row without ierror')
  end do
#endif

  call MPI_TYPE_FREE(rowtype, ierr)
  call MPI_TYPE_FREE(blocktype, ierr)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('type not freed')
  if (rank == 0) print '(a)', 'fortran_matrix: rows, subarrays and packs correct'
  call MPI_FINALIZE(ierr)

contains

  double precision function value(r, i, j)
    integer, intent(in) :: r, i, j
    value = r * 1d7 + i * 4096d0 + j
  end function value

  ! Bit-for-bit equality: every copied byte must be the sender's.
  logical function same(x, y)
    double precision, intent(in) :: x, y
    same = transfer(x, 0_8) == transfer(y, 0_8)
  end function same

  subroutine fail(what)
    character(*), intent(in) :: what
    integer :: e
    print '(a, i0, a, a)', 'rank ', rank, ': check failed: ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program fortran_matrix
