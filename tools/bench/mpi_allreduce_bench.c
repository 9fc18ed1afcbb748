/* The floor of the distributed benchmark (tools/bench/dist_bench.py): Open MPI's blocking
 * MPI_Allreduce, in place, of float32 sums of each size given, as bare as MPI gets. Run under
 * mpirun; rank 0 prints one JSON object, {"<floats>": median milliseconds, ...}.
 *   mxplug_bench_mpi_allreduce FLOATS:REPEATS...                                               */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("{");
  for (int i = 1; i < argc; ++i) {
    long floats = 0, repeats = 0;
    if (sscanf(argv[i], "%ld:%ld", &floats, &repeats) != 2 || floats < 1 || repeats < 1) {
      fprintf(stderr, "mxplug_bench_mpi_allreduce: '%s': expected FLOATS:REPEATS\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    float* data = malloc((size_t)floats * sizeof(float));
    double* ms = malloc((size_t)repeats * sizeof(double));
    for (long j = 0; j < floats; ++j) data[j] = (float)rank;
    for (long r = -2; r < repeats; ++r) { /* two rounds of warm-up */
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data, (int)floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (r >= 0) ms[r] = (MPI_Wtime() - start) * 1e3;
    }
    qsort(ms, (size_t)repeats, sizeof(double), by_value);
    if (rank == 0) printf("%s\"%ld\": %.4f", i > 1 ? ", " : "", floats, ms[repeats / 2]);
    free(data);
    free(ms);
  }
  if (rank == 0) printf("}\n");
  MPI_Finalize();
  return 0;
}
