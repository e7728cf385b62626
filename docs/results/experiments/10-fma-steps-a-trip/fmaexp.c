// Experiment driver: times fma_peak from a given PTX, as the lab does
// (3 warm-ups, 7 batches of 10 launches timed by events, median batch).
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorString(r_, &s); fprintf(stderr, "%s: %s\n", #x, s); exit(1); } } while (0)
static int cmp(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
  const char *ptx = argv[1]; int iters = atoi(argv[2]); int bpsm = atoi(argv[3]);
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  int sms, khz; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)); CK(cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
  CUmodule mod; CK(cuModuleLoad(&mod, ptx)); CUfunction f; CK(cuModuleGetFunction(&f, mod, "fma_peak"));
  int regs; CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
  unsigned blocks = bpsm * sms; CUdeviceptr out; CK(cuMemAlloc(&out, (size_t)blocks * 256 * 4));
  void *args[] = { &out, &iters };
  for (int w = 0; w < 3; ++w) CK(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, 0, args, 0));
  CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
  float ms[7];
  for (int k = 0; k < 7; ++k) {
    CK(cuEventRecord(a, 0));
    for (int l = 0; l < 10; ++l) CK(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, 0, args, 0));
    CK(cuEventRecord(b, 0)); CK(cuEventSynchronize(b)); CK(cuEventElapsedTime(&ms[k], a, b)); ms[k] /= 10;
  }
  qsort(ms, 7, sizeof(float), cmp);
  double flop = (double)blocks * 256 * iters * 8 * 2, peak = (double)sms * 128 * 2 * khz * 1e3;
  printf("%s iters=%d bpsm=%d regs=%d median %.4f ms (%.2f%%) min %.4f ms (%.2f%%) max %.4f ms\n", ptx, iters, bpsm, regs, ms[3], 100 * flop / (ms[3] * 1e-3) / peak, ms[0], 100 * flop / (ms[0] * 1e-3) / peak, ms[6]);
  return 0;
}
