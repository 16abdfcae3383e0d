// The median of a benchmark's samples (sorts them in place).
#ifndef MEDIAN_H
#define MEDIAN_H

#include <stdlib.h>

static int compare_doubles(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *samples, int count) {
    qsort(samples, (size_t)count, sizeof(double), compare_doubles);
    return samples[count / 2];
}

#endif
