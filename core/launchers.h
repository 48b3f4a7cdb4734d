// core/launchers: the one list of the launcher variables that name a process's
// local rank (torchrun, Open MPI, MPICH/Hydra, Slurm). core/planning reads the
// share from them; runtime/child_masks tells a launcher's rank by them at exec,
// where nothing may be allocated: plain constant arrays, no strings.
#pragma once

namespace pw::launchers {

struct Launcher {
  const char* rank;  // the local rank's variable
  const char* size;  // the local size's, or nullptr where it is derived (Slurm)
  const char* who;   // for the report
};

inline constexpr Launcher kLaunchers[] = {
    {"LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MPICH/Hydra"},
    {"SLURM_LOCALID", nullptr, "Slurm"},
};

// Beside the ranks, what names the job a rank belongs to: a process whose
// parent has the same values of all of these is that rank's child.
inline constexpr const char* kJobVars[] = {"SLURM_STEP_ID", "SLURM_JOB_ID"};

}  // namespace pw::launchers
