"""A real MQTT broker (Debian's mosquitto) for the namespace tests and benchmarks.

MqttBroker(lab) adds a namespace of its own ("<lab tag>-mq", so the lab's sweep
finds a leftover) joined to the lab's gw namespace by a veth pair that is no
uplink (`mq0` in gw, 10.231.9.2/24 <-> 10.231.9.1/24, no default route): the
agent reaches the broker whatever happens to its uplinks, and the tests can stop
and start the broker at will. Files made here, in a private directory:

  - a password file (mosquitto_passwd) with user `gateway` / `gateway-secret`
    and `observer` / `observer-secret`;
  - a CA and a server certificate for 10.231.9.1 (openssl), plus a second,
    unrelated CA that signs nothing of the broker's ("untrusted");
  - mosquitto.conf: 1883 with passwords, 8883 TLS with passwords, persistence on
    (queued QoS 1 messages for the observer's session survive a restart).

Subscriber runs `mosquitto_sub` in the broker's namespace with a line per
message: unix time (ns), retain flag, QoS, topic, payload, tab-separated; it
parses them back and offers wait_for(predicate, timeout, what). Nothing leaves
the namespaces: every address is the lab's own.
"""

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lab import LabError, read_log, run, tool_path

BROKER_ADDR = "10.231.9.1"
GATEWAY_ADDR = "10.231.9.2"
GW_IFACE = "mq0"
PASSWORDS = {"gateway": "gateway-secret", "observer": "observer-secret"}


def unavailable_reason():
    missing = [t for t in ("mosquitto", "mosquitto_sub", "mosquitto_passwd", "openssl") if tool_path(t) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (Debian: mosquitto mosquitto-clients openssl)"
    return None


def _openssl(*args, cwd):
    proc = subprocess.run([tool_path("openssl"), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        raise LabError(f"openssl {args[0]} failed: {proc.stderr.strip()}")


def make_ca(directory: Path, name: str):
    key, cert = directory / f"{name}.key", directory / f"{name}.crt"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN=uplinkd test {name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
             cwd=directory)
    return key, cert


def make_server_cert(directory: Path, ca_key: Path, ca_cert: Path, address: str):
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.crt"
    ext = directory / "server.ext"
    ext.write_text(f"subjectAltName=IP:{address}\nextendedKeyUsage=serverAuth\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", csr, "-subj", f"/CN={address}", cwd=directory)
    _openssl("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
             "-out", cert, "-days", "2", "-extfile", ext, cwd=directory)
    return key, cert


class MqttBroker:
    """cloud=True (a FailoverLab(cloud=True)): the broker is on the internet instead,
    at failoverlab.CLOUD_ADDR in the lab's cloud namespace, reached through whichever
    uplink the gateway's traffic leaves by (and cut with it)."""

    def __init__(self, lab, directory: Path, *, extra_config: str = "", cloud: bool = False):
        self.lab = lab
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o755)
        self.cloud = cloud
        if cloud:
            from failoverlab import CLOUD_ADDR, CLOUD_ROLE
            self.ns, self.address = lab.ns[CLOUD_ROLE], CLOUD_ADDR
        else:
            self.ns, self.address = f"{lab.tag}-mq", BROKER_ADDR
        self.extra_config = extra_config
        self.proc = None
        self.log = self.dir / "mosquitto.log"
        self._made_ns = False

    # -- set-up --------------------------------------------------------------
    def build(self):
        if not self.cloud:
            run(["ip", "netns", "add", self.ns])
            self._made_ns = True
            run(["ip", "-n", self.ns, "link", "set", "lo", "up"])
            run(["ip", "-n", self.lab.gw, "link", "add", GW_IFACE, "type", "veth",
                 "peer", "name", "up-mq0", "netns", self.ns])
            run(["ip", "-n", self.lab.gw, "addr", "add", f"{GATEWAY_ADDR}/24", "dev", GW_IFACE])
            run(["ip", "-n", self.ns, "addr", "add", f"{BROKER_ADDR}/24", "dev", "up-mq0"])
            run(["ip", "-n", self.lab.gw, "link", "set", GW_IFACE, "up"])
            run(["ip", "-n", self.ns, "link", "set", "up-mq0", "up"])
        self.passwords = self.dir / "passwords"
        for index, (user, password) in enumerate(PASSWORDS.items()):
            argv = [tool_path("mosquitto_passwd"), "-b"] + (["-c"] if index == 0 else []) + [str(self.passwords), user, password]
            run(argv)
        os.chmod(self.passwords, 0o600)
        self.ca_key, self.ca_cert = make_ca(self.dir, "ca")
        self.server_key, self.server_cert = make_server_cert(self.dir, self.ca_key, self.ca_cert, self.address)
        _, self.untrusted_ca = make_ca(self.dir, "untrusted")
        (self.dir / "persistence").mkdir(exist_ok=True)
        self.config = self.dir / "mosquitto.conf"
        self.config.write_text(
            f"user root\n"
            f"per_listener_settings false\n"
            f"allow_anonymous false\n"
            f"password_file {self.passwords}\n"
            f"persistence true\n"
            f"persistence_location {self.dir / 'persistence'}/\n"
            f"autosave_interval 1\n"
            f"log_dest file {self.log}\n"
            f"log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
            f"connection_messages true\n"
            f"max_queued_messages 1000\n"
            f"listener 1883 {self.address}\n"
            f"listener 8883 {self.address}\n"
            f"cafile {self.ca_cert}\ncertfile {self.server_cert}\nkeyfile {self.server_key}\n"
            + self.extra_config)
        return self

    def exec_argv(self, argv):
        return ["ip", "netns", "exec", self.ns, *map(str, argv)]

    # -- the broker process -----------------------------------------------------
    def start(self, timeout=10.0):
        self.proc = subprocess.Popen(self.exec_argv([tool_path("mosquitto"), "-c", self.config]),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._listening(1883) or not self._listening(8883):
            if self.proc.poll() is not None:
                raise LabError(f"mosquitto exited with {self.proc.returncode}\n{read_log(self.log)}")
            if time.monotonic() > deadline:
                raise LabError(f"mosquitto not listening after {timeout}s\n{read_log(self.log)}")
            time.sleep(0.02)
        return self

    def _listening(self, port):
        out = run(self.exec_argv(["ss", "-Hltn", f"sport = :{port}"]), check=False).stdout
        return bool(out.strip())

    def stop(self, sig=signal.SIGTERM):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.proc = None

    def pid(self):
        return self.proc.pid

    def destroy(self):
        self.stop()
        if self._made_ns:
            for tok in run(["ip", "netns", "pids", self.ns], check=False).stdout.split():
                try:
                    os.kill(int(tok), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run(["ip", "netns", "delete", self.ns], check=False)
            self._made_ns = False

    def __enter__(self):
        return self.build().start()

    def __exit__(self, *exc):
        self.destroy()
        return False

    # -- the agent's side ----------------------------------------------------------
    def credentials_file(self, path: Path, password="gateway-secret", mode=0o600) -> Path:
        path.write_text(f"# test credentials\nusername = gateway\npassword = {password}\n")
        os.chmod(path, mode)
        return path

    def mqtt_section(self, credentials: Path, *, tls=False, ca=None, node="gw1", extra="") -> str:
        broker = f"mqtts://{self.address}:8883" if tls else f"mqtt://{self.address}:1883"
        text = f"\n[mqtt]\nbroker = {broker}\ncredentials-file = {credentials}\nnode-id = {node}\n"
        if tls:
            text += f"ca-file = {ca or self.ca_cert}\n"
        return text + extra


@dataclass(frozen=True)
class Message:
    t: float        # wall-clock arrival at the subscriber
    retained: bool
    qos: int
    topic: str
    payload: str


class Subscriber:
    """mosquitto_sub as the observer, in the broker's namespace. persistent=True:
    a fixed client id and a kept QoS 1 session, so messages published while it is
    away (the broker restarted) are delivered when it is back."""

    def __init__(self, broker: MqttBroker, topics, path: Path, *, persistent=False, client_id="observer"):
        self.broker = broker
        self.path = Path(path)
        argv = [tool_path("mosquitto_sub"), "-h", broker.address, "-p", "1883", "-u", "observer",
                "-P", PASSWORDS["observer"], "-q", "1", "-F", "%U\t%r\t%q\t%t\t%p", "-i", client_id]
        if persistent:
            argv += ["-c"]
        for topic in topics:
            argv += ["-t", topic]
        self._out = open(self.path, "ab")
        self.proc = subprocess.Popen(broker.exec_argv(argv), stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def messages(self):
        out = []
        text = read_log(self.path)
        # mosquitto_sub writes a long message in more than one write: a last line
        # without its newline is still being written, and is not a message yet.
        complete = text[:text.rfind("\n") + 1]
        for line in complete.splitlines():
            fields = line.split("\t", 4)
            if len(fields) != 5 or not fields[0].replace(".", "").isdigit():
                continue
            out.append(Message(float(fields[0]), fields[1] == "1", int(fields[2]), fields[3], fields[4]))
        return out

    def wait_for(self, predicate, timeout, what, poll=0.01):
        deadline = time.monotonic() + timeout
        while True:
            msgs = self.messages()
            value = predicate(msgs)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(f"subscriber: {what} not seen within {timeout}s; got:\n"
                                     + "\n".join(f"{m.t:.3f} r={int(m.retained)} {m.topic} {m.payload[:200]}"
                                                 for m in msgs[-40:]))
            time.sleep(poll)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._out.close()
