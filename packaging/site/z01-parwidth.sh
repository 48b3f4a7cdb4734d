# z01-parwidth.sh: parwidth for every login shell of a site, as one of Lmod's
# system default modules. Copy to /etc/profile.d/ (it must come after lmod.sh,
# hence the name) and edit the choices below; docs/site-default.md explains
# each. Users opt out with `module unload parwidth` (or a saved default
# collection without it), or for one job with `PARWIDTH_MODE=off command`.
#
# A site that already restores a standard environment (a z00_StdEnv.sh) adds
# parwidth to its LMOD_SYSTEM_DEFAULT_MODULES there instead, and keeps only
# the PARWIDTH_* lines of this file.

# Which programs are governed: shell globs on the program's name, ':'-separated.
# Unset = every program that creates threads. A site default should be narrow.
# A user's own value, set before this file runs, is kept.
export PARWIDTH_INCLUDE="${PARWIDTH_INCLUDE-python*:torchrun}"
# Never governed, even when included; with an INCLUDE list this is rarely needed.
# export PARWIDTH_EXCLUDE="make:ninja:cc1*"
# Where each governed process writes its JSON report (%p = its pid). The
# directory must exist and be writable by every user: install -d -m 1777 DIR.
# export PARWIDTH_REPORT="/var/tmp/parwidth-reports/${USER}-%p.json"

if [ -z "${__Init_Default_Modules:-}" ]; then
  export __Init_Default_Modules=1
  export LMOD_SYSTEM_DEFAULT_MODULES="${LMOD_SYSTEM_DEFAULT_MODULES:-parwidth}"
  module --initial_load --no_redirect restore
else
  module refresh
fi
