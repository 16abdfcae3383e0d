// The device image the entry-point suite loads: two regions and one declare target global.
#pragma omp declare target
int image_global = 7;
#pragma omp end declare target

void bump(int *x) {
#pragma omp target map(tofrom : x [0:1])
    x[0] += image_global;
}

void twice(int *x) {
#pragma omp target map(tofrom : x [0:1])
    x[0] *= 2;
}

int main(void) {
    int x = 1;
    bump(&x);
    twice(&x);
    return x == 16 ? 0 : 1;
}
