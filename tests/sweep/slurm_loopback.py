"""A single-node Slurm cluster on loopback for the tests: slurmctld and slurmd of Debian's
slurm-wlm, started in a private folder with their own ports and AuthType=auth/none, and
stopped (by process id) when the `with` block ends. Clients reach it through SLURM_CONF.
"""
import getpass
import os
import pathlib
import shutil
import socket
import subprocess
import time

NODE = "kvtiernode"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(name):
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
        p = pathlib.Path(d) / name
        if p.exists():
            return str(p)
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: install Debian's slurm-wlm")
    return found


class LoopbackCluster:
    def __init__(self, root, cpus=2):
        self.root = pathlib.Path(root)
        self.cpus = cpus
        self.procs = []
        self.env = dict(os.environ)

    def __enter__(self):
        r = self.root
        for d in ("state", "spool", "log"):
            (r / d).mkdir(parents=True, exist_ok=True)
        user = getpass.getuser()
        conf = r / "slurm.conf"
        conf.write_text(f"""# Written by tests/sweep/slurm_loopback.py: one node on 127.0.0.1.
ClusterName=kvtiertest
SlurmctldHost={socket.gethostname().split(".")[0]}(127.0.0.1)
MailProg=/bin/true
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/none
CredType=cred/none
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=300
MaxArraySize=10001
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} CPUs={self.cpus} RealMemory=1000 State=UNKNOWN
PartitionName=loop Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
""")
        self.env["SLURM_CONF"] = str(conf)
        logs = open(r / "log" / "daemons.out", "w")
        self.procs.append(subprocess.Popen([_daemon("slurmctld"), "-D", "-i", "-f", str(conf)], env=self.env,
                                           stdout=logs, stderr=subprocess.STDOUT))
        self.procs.append(subprocess.Popen([_daemon("slurmd"), "-D", "-N", NODE, "-f", str(conf)], env=self.env,
                                           stdout=logs, stderr=subprocess.STDOUT))
        deadline = time.time() + 60
        while time.time() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    self._stop()
                    raise RuntimeError("a Slurm daemon exited at start:\n" + self.logs())
            s = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if s.returncode == 0 and s.stdout.strip() in ("idle", "mixed", "allocated"):
                return self
            time.sleep(0.5)
        self._stop()
        raise RuntimeError("the loopback Slurm node did not come up in 60 s:\n" + self.logs())

    def logs(self):
        text = ""
        for f in sorted((self.root / "log").glob("*")):
            text += f"--- {f}\n" + f.read_text(errors="replace")[-4000:]
        return text

    def _stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def __exit__(self, *exc):
        self._stop()
        return False
