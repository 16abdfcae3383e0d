! fortran_matrix.f90 again, written with `use mpi_f08`: derived-type handles and
! statuses, and ierror mostly left out (the bindings then pass no pointer for it).
! Same exchanges, same element-by-element checks; under the interposer the
! statistics must show the strided ones were accelerated.
program fortran_matrix_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 300
  double precision, allocatable :: a(:, :), b(:, :)
  integer :: rank, nranks, peer, ierr, i, j, pos
  type(MPI_Datatype) :: rowtype, blocktype, coltype
  type(MPI_Request) :: req(2), req3(3)
  type(MPI_Status) :: st, sts(2), sts3(3)
  integer :: cnt, idx, idx3(3), outcount, done, k
  integer :: sizes(2), subsizes(2), starts(2)
  character, allocatable :: packed(:)
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks)
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
  call MPI_TYPE_VECTOR(n, 1, n, MPI_DOUBLE_PRECISION, rowtype)
  call MPI_TYPE_COMMIT(rowtype)

  ! 1. Blocking: rank 0's row 7 becomes rank 1's row 11; the status counts one row.
  if (rank == 0) then
    call MPI_SEND(a(7, 1), 1, rowtype, 1, 1, MPI_COMM_WORLD)
  else
    call MPI_RECV(b(11, 1), 1, rowtype, 0, 1, MPI_COMM_WORLD, st)
    call MPI_GET_COUNT(st, rowtype, cnt)
    if (cnt /= 1 .or. st%MPI_SOURCE /= 0) call fail('recv status')
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
                                blocktype)
  call MPI_TYPE_COMMIT(blocktype)
  b = -1d0
  call MPI_IRECV(b, 1, blocktype, peer, 2, MPI_COMM_WORLD, req(1))
  call MPI_ISEND(a, 1, blocktype, peer, 2, MPI_COMM_WORLD, req(2))
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
  call MPI_IRECV(b(2, 1), 1, rowtype, peer, 3, MPI_COMM_WORLD, req(1))
  call MPI_SEND(a(5, 1), 1, rowtype, peer, 3, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(req(1), flag, MPI_STATUS_IGNORE)
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
  call MPI_UNPACK(packed, 8 * n, pos, b(1, 1), 1, rowtype, MPI_COMM_WORLD)
  do j = 1, n
    if (.not. same(b(1, j), value(rank, 9, j))) call fail('unpacked row')
  end do

  ! 5. Three rows in flight, completed by MPI_WAITANY (1-based indices) and MPI_TESTSOME.
  b = -1d0
  do k = 1, 3
    call MPI_IRECV(b(k, 1), 1, rowtype, peer, 10 + k, MPI_COMM_WORLD, req3(k))
  end do
  do k = 3, 1, -1
    call MPI_SEND(a(20 + k, 1), 1, rowtype, peer, 10 + k, MPI_COMM_WORLD)
  end do
  call MPI_WAITANY(3, req3, idx, st)
  if (idx < 1 .or. idx > 3 .or. st%MPI_TAG /= 10 + idx .or. req3(idx) /= MPI_REQUEST_NULL) &
    call fail('waitany index')
  done = 1
  do while (done < 3)
    call MPI_TESTSOME(3, req3, outcount, idx3, sts3)
    if (outcount == MPI_UNDEFINED) exit
    do k = 1, outcount
      if (idx3(k) < 1 .or. idx3(k) > 3 .or. sts3(k)%MPI_TAG /= 10 + idx3(k)) call fail('testsome index')
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
  call MPI_SEND_INIT(a(30, 1), 1, rowtype, peer, 20, MPI_COMM_WORLD, req(1))
  call MPI_RECV_INIT(b(30, 1), 1, rowtype, peer, 20, MPI_COMM_WORLD, req(2))
  do k = 1, 3
    a(30, :) = a(30, :) + 1d0
    b = -1d0
    if (k == 2) then
      call MPI_START(req(2))
      call MPI_START(req(1))
    else
      call MPI_STARTALL(2, req)
    end if
    call MPI_WAITALL(2, req, sts, ierr)
    do j = 1, n
      if (.not. same(b(30, j), value(peer, 30, j) + k)) call fail('persistent row')
    end do
  end do
  call MPI_REQUEST_FREE(req(1))
  call MPI_REQUEST_FREE(req(2))
  if (req(1) /= MPI_REQUEST_NULL .or. req(2) /= MPI_REQUEST_NULL) call fail('persistent requests not freed')
  do j = 1, n
    a(30, j) = value(rank, 30, j)
  end do

  ! 7. A matrix column: contiguous in Fortran, so the interposer must leave it to Open MPI
  !    (its statistics count it under "contiguous") and the data must still arrive.
  subsizes = (/ n, 1 /)
  starts = (/ 0, 12 /)
  call MPI_TYPE_CREATE_SUBARRAY(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, &
                                coltype)
  call MPI_TYPE_COMMIT(coltype)
  b = -1d0
  call MPI_SENDRECV(a, 1, coltype, peer, 5, b, 1, coltype, peer, 5, MPI_COMM_WORLD, st)
  do i = 1, n
    if (.not. same(b(i, 13), value(peer, i, 13))) call fail('column')
    if (.not. same(b(i, 12), -1d0)) call fail('column neighbour written')
  end do
  call MPI_TYPE_FREE(coltype)

  call MPI_TYPE_FREE(rowtype)
  call MPI_TYPE_FREE(blocktype)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('type not freed')
  if (rank == 0) print '(a)', 'fortran_matrix_f08: rows, subarrays and packs correct'
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
end program fortran_matrix_f08
