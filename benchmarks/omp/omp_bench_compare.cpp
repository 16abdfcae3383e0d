// omp_bench_compare: runs one OpenMP offload benchmark with LLVM's stock x86_64 plugin and with
// ours, alternately, in one invocation (the plugin is swapped through LD_LIBRARY_PATH), and
// reports each metric's median per plugin and the ratio stock/ours (> 1: ours is faster).
//
// usage: omp_bench_compare [--runs N] --plugin-dir DIR -- PROGRAM [ARGS...]
// The program prints "metric <name> <value> <unit>" lines (lower is better), "plugin <name>"
// and "check ok". Any failed run of ours (crash, wrong result, wrong plugin) makes the exit
// status 1; failed runs of the stock plugin are counted and reported (libomp 14 itself
// occasionally asserts under many hidden-helper tasks), and medians use the runs that succeeded.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct RunResult {
    bool ok = false;
    std::string plugin;
    std::map<std::string, std::pair<double, std::string>> metrics; // name -> (value, unit)
};

/// Runs argv with LD_LIBRARY_PATH set to plugin_dir (ours) or unset of it (stock).
RunResult run_once(char **argv, const std::string &plugin_dir, bool ours) {
    int fds[2];
    if (pipe(fds) != 0)
        return {};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (ours)
            setenv("LD_LIBRARY_PATH", plugin_dir.c_str(), 1);
        else
            unsetenv("LD_LIBRARY_PATH");
        setenv("OMP_TARGET_OFFLOAD", "MANDATORY", 1);
        execvp(argv[0], argv);
        perror("exec");
        _exit(127);
    }
    close(fds[1]);
    std::string output;
    char buffer[4096];
    ssize_t got;
    while ((got = read(fds[0], buffer, sizeof buffer)) > 0)
        output.append(buffer, static_cast<size_t>(got));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);

    RunResult result;
    bool checked = false;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string kind, name, unit;
        double value = 0;
        words >> kind;
        if (kind == "metric" && (words >> name >> value >> unit))
            result.metrics[name] = {value, unit};
        else if (kind == "plugin")
            words >> result.plugin;
        else if (kind == "check")
            checked = line == "check ok";
    }
    result.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && checked && !result.metrics.empty();
    if (!result.ok)
        fprintf(stderr, "omp_bench_compare: a run with the %s plugin failed:\n%s", ours ? "kupl" : "stock",
                output.c_str());
    return result;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int usage() {
    fprintf(stderr, "usage: omp_bench_compare [--runs N] --plugin-dir DIR -- PROGRAM [ARGS...]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    int runs = 5;
    std::string plugin_dir;
    int first_program_arg = -1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--plugin-dir") && i + 1 < argc)
            plugin_dir = argv[++i];
        else if (!strcmp(argv[i], "--")) {
            first_program_arg = i + 1;
            break;
        } else
            return usage();
    }
    if (runs < 1 || plugin_dir.empty() || first_program_arg < 0 || first_program_arg >= argc)
        return usage();
    char **program = argv + first_program_arg;

    std::map<std::string, std::vector<double>> stock, ours;
    std::map<std::string, std::string> units;
    int failed_stock = 0, failed_ours = 0;
    for (int run = 0; run < runs; ++run) {
        for (int turn = 0; turn < 2; ++turn) {
            const bool use_ours = (run + turn) % 2 == 1; // alternate who goes first
            RunResult result = run_once(program, plugin_dir, use_ours);
            const char *expected = use_ours ? "kupl" : "stock";
            if (result.ok && result.plugin != expected) {
                fprintf(stderr, "omp_bench_compare: expected the %s plugin, got '%s'\n", expected,
                        result.plugin.c_str());
                result.ok = false;
            }
            if (!result.ok) {
                ++(use_ours ? failed_ours : failed_stock);
                continue;
            }
            for (const auto &[name, value] : result.metrics) {
                (use_ours ? ours : stock)[name].push_back(value.first);
                units[name] = value.second;
            }
        }
    }

    printf("%-34s %14s %14s %8s\n", "metric (median of runs)", "stock", "kupl", "stock/kupl");
    for (const auto &[name, values] : stock) {
        if (!ours.count(name))
            continue;
        const double s = median(values), k = median(ours[name]);
        printf("%-34s %11.3f %-2s %11.3f %-2s %8.2f\n", name.c_str(), s, units[name].c_str(), k,
               units[name].c_str(), k > 0 ? s / k : 0.0);
    }
    printf("runs per plugin: %d; failed runs: stock %d, kupl %d\n", runs, failed_stock, failed_ours);
    return failed_ours == 0 && failed_stock < runs ? 0 : 1;
}
