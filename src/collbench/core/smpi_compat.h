/* Simulation build only (COLLBENCH_SIMGRID, cmake/CollbenchSimgrid.cmake): force-included after
   SimGrid's smpi_helpers.h, which smpicxx force-includes first. That header defines exit(x) as a
   macro, which breaks every member function named exit (CLI11's App::exit) and std::exit. A
   collbench rank never calls exit() to end itself (main returns), so the macro is taken back; the
   helper's other macros (sleeps, clocks, malloc) stay: they make sleeps and clocks simulated. */
#ifdef exit
#undef exit
#endif
