"""In-process fakes of upstream services (GitHub), for tests, the offline demo and benchmarks."""
