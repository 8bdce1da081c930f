#!/usr/bin/env python3
"""A small AT-command modem that ModemManager's test mode can drive.

`ModemManager --test-enable` exports org.freedesktop.ModemManager1.Test with
SetProfile(id, plugin, ports): it makes a "virtual" device whose AT ports are
the given names and creates the modem with the named plugin, without probing.
A port name starting with "abstract:" is a unix stream socket in the abstract
namespace whose name is the whole string, "abstract:" included: ModemManager
connects to it as a client (one connection per open of the port; it closes and
reopens ports, e.g. to hang up a data call), so this program listens. Abstract
sockets belong to the network namespace, so both must run in the same one.

This emulator listens on every port given with --port, answers the 3GPP
commands ModemManager sends to probe, initialise, enable, register, connect
(PPP-style: ATD*99***<cid># then CONNECT), read signal (+CSQ, +CESQ) and
reset (+CFUN=15) a modem, and answers anything else with ERROR (logged, so a
missing command shows up in the log). Registration changes are sent as
unsolicited +CREG/+CGREG/+CEREG to every port that asked for them (n=1 or 2),
a network-side end of the data call as +CGEV (after +CGEREP=1 or 2).

A reset (AT+CFUN=15, or "unplug" on the control channel) behaves like a real
modem rebooting: every connection is closed and nothing listens on the ports
for `reboot_seconds` (the device is gone); then the ports listen again with
the modem's per-boot settings (echo, unsolicited modes, context activation,
an entered PIN, CFUN) back to their power-on values. The network facts set
through the control channel (SIM, registration, operator, signal) and the
context definitions (+CGDCONT) survive it.

Control channel: a unix stream socket at a filesystem path (--control), one
JSON object per line in, one JSON object per line out:

  {"op": "get"}                      -> {"ok": true, "state": {...}}
  {"op": "set", KEY: VALUE, ...}     -> {"ok": true, "state": {...}}
      sim: "ready" | "missing" | "pin"      pin: "1234"
      registration: "home" | "roaming" | "searching" | "denied" | "idle"
      operator_name, operator_code ("00101"), tac (int), cell_id (int)
      act: "gsm" | "umts" | "lte"
      csq_rssi (0-31, 99), csq_ber (0-7, 99)
      rsrp_dbm (-141..-44), rsrq_db (-20..-3): the LTE fields of +CESQ
      rscp_dbm, ecno_db, rxlev: its UMTS/GSM fields (sent for act umts/gsm);
      +CESQ has no SINR, so ModemManager's Signal.Lte carries no "snr" here
      data_ok (bool): whether ATD / +CGACT=1 succeed
      reboot_seconds (float): how long a reset keeps the ports away
  {"op": "log", "since": N}          -> {"ok": true, "entries": [...], "next": M}
      every line received on an AT port: {"seq", "t" (time.monotonic(),
      comparable across processes), "port", "conn", "cmd", "known"}; and
      every unsolicited line sent: the same with "urc" instead of "cmd"
  {"op": "unplug", "seconds": S}     -> ports away for S seconds (null: until plug)
  {"op": "plug"}                     -> ports back at once
  {"op": "drop_data"}                -> {"ok": true, "dropped": [cid...]}: the network
      ends the data call (+CGEV: NW PDN DEACT <cid>, NO CARRIER on the data port)
  {"op": "ping"}                     -> {"ok": true, "up": bool, "boots": n}
  {"op": "watch"}                    -> {"ok": true, "up": bool, "boots": n}, then
      one line per change of the ports: {"event": "gone" | "back", "t", "boots"}
      (what udev would announce; modemrig.py's announcer turns it into SetProfile)

Standard library only. Prints "ready" on stdout once every socket listens.
"""

import argparse
import heapq
import json
import os
import re
import selectors
import signal
import socket
import sys
import time

MAX_LINE_BYTES = 4096          # an AT line longer than this is dropped (and logged)
MAX_CONTROL_LINE_BYTES = 65536
MAX_OUTPUT_BYTES = 1 << 20     # a client that stops reading is dropped past this
LOG_ENTRIES_MAX = 20000        # the command log is bounded; old entries are dropped

REG_STAT = {"idle": 0, "home": 1, "searching": 2, "denied": 3, "roaming": 5}
ACT_CODE = {"gsm": 0, "umts": 2, "lte": 7}
SIM_STATES = ("ready", "missing", "pin")

# +CME ERROR codes (3GPP TS 27.007, 9.2) used here, with their verbose texts.
CME = {
    3: "operation not allowed",
    4: "operation not supported",
    10: "SIM not inserted",
    11: "SIM PIN required",
    16: "incorrect password",
    30: "no network service",
    50: "incorrect parameters",
    133: "requested service option not subscribed",
}


class ControlError(ValueError):
    pass


def _int_in(key, value, lo, hi, also=()):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(f"{key}: expected an integer, got {value!r}")
    if not (lo <= value <= hi or value in also):
        raise ControlError(f"{key}: {value} is out of range {lo}..{hi}")
    return value


def _num_in(key, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ControlError(f"{key}: expected a number, got {value!r}")
    if not lo <= value <= hi:
        raise ControlError(f"{key}: {value} is out of range {lo}..{hi}")
    return value


def _bool(key, value):
    if not isinstance(value, bool):
        raise ControlError(f"{key}: expected true or false, got {value!r}")
    return value


def _str_re(key, value, pattern, what):
    if not isinstance(value, str) or not re.fullmatch(pattern, value):
        raise ControlError(f"{key}: expected {what}, got {value!r}")
    return value


class Network:
    """What the control channel sets: facts about the SIM and the network that
    survive a modem reboot."""

    def __init__(self):
        self.sim = "ready"
        self.pin = "1234"
        self.registration = "home"
        self.operator_name = "Uplink Test"
        self.operator_code = "00101"
        self.tac = 0x2B67
        self.cell_id = 0x01A2D001
        self.act = "lte"
        self.csq_rssi = 20
        self.csq_ber = 99
        self.rsrp_dbm = -95
        self.rsrq_db = -10.0
        self.rscp_dbm = None
        self.ecno_db = None
        self.rxlev = None
        self.data_ok = True
        self.reboot_seconds = 1.0

    SETTERS = {
        "sim": lambda v: _str_re("sim", v, "|".join(SIM_STATES), "one of " + ", ".join(SIM_STATES)),
        "pin": lambda v: _str_re("pin", v, r"[0-9]{4,8}", "4 to 8 digits"),
        "registration": lambda v: _str_re("registration", v, "|".join(REG_STAT),
                                          "one of " + ", ".join(REG_STAT)),
        "operator_name": lambda v: _str_re("operator_name", v, r"[A-Za-z0-9 ._-]{1,24}",
                                           "1 to 24 letters, digits, spaces or ._-"),
        "operator_code": lambda v: _str_re("operator_code", v, r"[0-9]{5,6}", "5 or 6 digits (MCC MNC)"),
        "tac": lambda v: _int_in("tac", v, 1, 0xFFFE),
        "cell_id": lambda v: _int_in("cell_id", v, 1, 0x0FFFFFFF),
        "act": lambda v: _str_re("act", v, "|".join(ACT_CODE), "one of " + ", ".join(ACT_CODE)),
        "csq_rssi": lambda v: _int_in("csq_rssi", v, 0, 31, also=(99,)),
        "csq_ber": lambda v: _int_in("csq_ber", v, 0, 7, also=(99,)),
        "rsrp_dbm": lambda v: None if v is None else _num_in("rsrp_dbm", v, -141, -44),
        "rsrq_db": lambda v: None if v is None else _num_in("rsrq_db", v, -20, -3),
        "rscp_dbm": lambda v: None if v is None else _num_in("rscp_dbm", v, -121, -25),
        "ecno_db": lambda v: None if v is None else _num_in("ecno_db", v, -24.5, 0),
        "rxlev": lambda v: None if v is None else _int_in("rxlev", v, 0, 63),
        "data_ok": lambda v: _bool("data_ok", v),
        "reboot_seconds": lambda v: _num_in("reboot_seconds", v, 0, 120),
    }

    def update(self, changes: dict):
        """Validate every change first, then apply all (all or nothing)."""
        checked = {}
        for key, value in changes.items():
            if key not in self.SETTERS:
                raise ControlError(f"unknown key {key!r} (known: {', '.join(sorted(self.SETTERS))})")
            checked[key] = self.SETTERS[key](value)
        for key, value in checked.items():
            setattr(self, key, value)

    def as_dict(self):
        return {k: getattr(self, k) for k in self.SETTERS}

    # +CESQ levels (3GPP TS 27.007, 8.69); ModemManager maps them back with
    # rsrp = level - 141 dBm, rsrq = level / 2 - 20 dB.
    def cesq_levels(self):
        rxlev, ber, rscp, ecno, rsrq, rsrp = 99, 99, 255, 255, 255, 255
        if self.act == "lte":
            if self.rsrp_dbm is not None:
                rsrp = max(0, min(97, int(round(self.rsrp_dbm + 141))))
            if self.rsrq_db is not None:
                rsrq = max(0, min(34, int(round((self.rsrq_db + 20) * 2))))
        elif self.act == "umts":
            if self.rscp_dbm is not None:
                rscp = max(0, min(96, int(round(self.rscp_dbm + 121))))
            if self.ecno_db is not None:
                ecno = max(0, min(49, int(round((self.ecno_db + 24.5) * 2))))
        elif self.rxlev is not None:
            rxlev = self.rxlev
        return rxlev, ber, rscp, ecno, rsrq, rsrp


class PortState:
    """Per-port modem settings (reset by a reboot)."""

    def __init__(self):
        self.echo = True
        self.verbose_errors = 0          # +CMEE
        self.reg_mode = {"CREG": 0, "CGREG": 0, "CEREG": 0}
        self.cgerep = 0                  # +CGEREP: packet domain events (+CGEV) wanted
        self.cops_format = 0


class Conn:
    def __init__(self, modem, port, sock, number):
        self.modem, self.port, self.sock, self.number = modem, port, sock, number
        self.inbuf = b""
        self.outbuf = b""
        self.data_mode = False            # after CONNECT: bytes are PPP, not commands
        self.data_cid = None
        self.dropping = False             # discarding an over-long line until its end


class Port:
    def __init__(self, name):
        self.name = name                  # the ModemManager port name, "abstract:..."
        self.short = name.rsplit(":", 1)[-1] if name.startswith("abstract:") else os.path.basename(name)
        self.listener = None
        self.state = PortState()
        self.conns = []


class Modem:
    def __init__(self, port_names, control_path, log_path, identity):
        self.sel = selectors.DefaultSelector()
        self.net = Network()
        self.identity = identity
        self.ports = [Port(n) for n in port_names]
        self.control_path = control_path
        self.control_listener = None
        self.control_conns = {}
        self.watchers = set()             # control sockets that asked for events
        self.timers = []                  # heap of (when, seq, fn)
        self.timer_seq = 0
        self.log_file = open(log_path, "a", buffering=1) if log_path else None
        self.entries = []
        self.entries_base = 0             # seq of entries[0]
        self.conn_counter = 0
        self.up = False
        self.boots = 0
        self.reboot_timer = None
        self.contexts = {}                # cid -> {"type", "apn", "active"}
        self._power_on()

    # -- logging ---------------------------------------------------------
    def log(self, text):
        if self.log_file:
            self.log_file.write(f"{time.monotonic():.6f} {text}\n")

    def record(self, port, conn, **fields):
        seq = self.entries_base + len(self.entries)
        entry = {"seq": seq, "t": time.monotonic(), "port": port.short,
                 "conn": conn.number if conn else None, **fields}
        self.entries.append(entry)
        if len(self.entries) > LOG_ENTRIES_MAX:
            drop = len(self.entries) - LOG_ENTRIES_MAX
            del self.entries[:drop]
            self.entries_base += drop
        return entry

    # -- timers ----------------------------------------------------------
    def call_later(self, seconds, fn):
        self.timer_seq += 1
        item = [time.monotonic() + seconds, self.timer_seq, fn]
        heapq.heappush(self.timers, item)
        return item

    @staticmethod
    def cancel(item):
        if item is not None:
            item[2] = None

    # -- power -----------------------------------------------------------
    def _power_on(self):
        self.cfun = 1
        self.sim_unlocked = False         # a PIN entered since boot
        # PDP context definitions live in the modem's NVRAM: they survive a
        # reboot, their activation does not.
        self.contexts = {cid: {**ctx, "active": False} for cid, ctx in self.contexts.items()}
        for port in self.ports:
            port.state = PortState()
        self.boots += 1

    @property
    def sim_state(self):
        if self.net.sim == "pin" and self.sim_unlocked:
            return "ready"
        return self.net.sim

    def listen(self):
        for port in self.ports:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if port.name.startswith("abstract:"):
                addr = "\0" + port.name
            else:
                addr = port.name
                if os.path.exists(addr):
                    os.unlink(addr)           # left by the previous boot
            s.bind(addr)
            s.listen(8)
            s.setblocking(False)
            port.listener = s
            self.sel.register(s, selectors.EVENT_READ, ("accept", port))
        self.up = True
        self.log(f"ports listening (boot {self.boots})")

    def unplug(self, seconds, why):
        """The device goes away: every connection and listener closes; it comes
        back (power-on state) after `seconds`, or on plug() when None."""
        if not self.up:
            return
        self.log(f"ports gone ({why}); back in {seconds}s")
        for port in self.ports:
            for conn in list(port.conns):
                self.close_conn(conn)
            if port.listener is not None:
                self.sel.unregister(port.listener)
                port.listener.close()
                port.listener = None
        self.up = False
        self.cancel(self.reboot_timer)
        self.reboot_timer = None if seconds is None else self.call_later(seconds, self.plug)
        self.emit("gone")

    def plug(self):
        if self.up:
            return
        self.cancel(self.reboot_timer)
        self.reboot_timer = None
        self._power_on()
        self.listen()
        self.emit("back")

    # -- registration ----------------------------------------------------
    def reg_stat(self):
        if self.cfun != 1 or self.sim_state != "ready":
            return 0
        return REG_STAT[self.net.registration]

    def registered(self):
        return self.reg_stat() in (1, 5)

    def reg_fields(self, n):
        """The fields after the mode: stat[,"lac/tac","ci",AcT] (location only
        for n=2 while registered)."""
        stat = self.reg_stat()
        if n == 2 and stat in (1, 5):
            return (f'{stat},"{self.net.tac:04X}","{self.net.cell_id:08X}",'
                    f'{ACT_CODE[self.net.act]}')
        return str(stat)

    def reg_snapshot(self):
        return (self.reg_stat(), self.net.tac, self.net.cell_id, self.net.act)

    def send_registration_urcs(self):
        for port in self.ports:
            for name, mode in port.state.reg_mode.items():
                if mode == 0:
                    continue
                line = f"+{name}: {self.reg_fields(mode)}"
                for conn in port.conns:
                    if not conn.data_mode:
                        self.send(conn, f"\r\n{line}\r\n")
                        self.record(port, conn, urc=line)
                        self.log(f"{port.short}#{conn.number} URC {line}")

    def drop_data(self):
        """The network ends every active context: +CGEV: NW PDN DEACT to the
        ports that asked for packet domain events, and NO CARRIER on a port in
        data mode, which goes back to command mode (as after a hang-up)."""
        dropped = sorted(cid for cid, ctx in self.contexts.items() if ctx["active"])
        for cid in dropped:
            self.contexts[cid]["active"] = False
        for port in self.ports:
            for conn in port.conns:
                if conn.data_mode:
                    conn.data_mode, conn.data_cid = False, None
                    self.send(conn, "\r\nNO CARRIER\r\n")
                    self.record(port, conn, urc="NO CARRIER")
                elif port.state.cgerep:
                    for cid in dropped:
                        line = f"+CGEV: NW PDN DEACT {cid}"
                        self.send(conn, f"\r\n{line}\r\n")
                        self.record(port, conn, urc=line)
        self.log(f"network dropped contexts {dropped}")
        return dropped

    # -- control channel -------------------------------------------------
    def emit(self, event):
        """Tell every watcher that the ports went away or came back."""
        line = (json.dumps({"event": event, "t": time.monotonic(), "boots": self.boots}) + "\n").encode()
        for sock in list(self.watchers):
            try:
                sock.sendall(line)
            except OSError:
                self.watchers.discard(sock)

    def control(self, req, sock):
        op = req.get("op")
        if op == "watch":
            self.watchers.add(sock)
            return {"ok": True, "up": self.up, "boots": self.boots}
        if op == "ping":
            return {"ok": True, "up": self.up, "boots": self.boots}
        if op == "get":
            return {"ok": True, "state": self.state()}
        if op == "set":
            changes = {k: v for k, v in req.items() if k != "op"}
            before = self.reg_snapshot()
            self.net.update(changes)
            self.log(f"control set {json.dumps(changes, sort_keys=True)}")
            if self.reg_snapshot() != before:
                self.send_registration_urcs()
            return {"ok": True, "state": self.state()}
        if op == "log":
            since = req.get("since", 0)
            if isinstance(since, bool) or not isinstance(since, int) or since < 0:
                raise ControlError(f"since: expected a non-negative integer, got {since!r}")
            start = max(0, since - self.entries_base)
            return {"ok": True, "entries": self.entries[start:],
                    "next": self.entries_base + len(self.entries)}
        if op == "unplug":
            seconds = req.get("seconds")
            if seconds is not None:
                _num_in("seconds", seconds, 0, 600)
            self.unplug(seconds, "unplugged by control")
            return {"ok": True}
        if op == "plug":
            self.plug()
            return {"ok": True}
        if op == "drop_data":
            return {"ok": True, "dropped": self.drop_data()}
        raise ControlError(f"unknown op {op!r} (known: get, set, log, unplug, plug, drop_data, "
                           f"ping, watch)")

    def state(self):
        return {**self.net.as_dict(), "up": self.up, "boots": self.boots, "cfun": self.cfun,
                "sim_state": self.sim_state, "reg_stat": self.reg_stat(),
                "contexts": {str(k): v for k, v in sorted(self.contexts.items())},
                "connections": {p.short: len(p.conns) for p in self.ports}}

    # -- AT commands -----------------------------------------------------
    def error(self, port, code=None):
        """A final error result: ERROR, or +CME ERROR per +CMEE."""
        mode = port.state.verbose_errors
        if code is None or mode == 0:
            return "ERROR"
        if mode == 2:
            return f"+CME ERROR: {CME[code]}"
        return f"+CME ERROR: {code}"

    def execute(self, conn, line):
        """Run one command line ("AT..."); returns the text to send, or None
        when the line is not an AT command."""
        port = conn.port
        if line.upper() == "A/" or not line[:2].upper() == "AT":
            return None
        body = line[2:]
        info = []
        result = "OK"
        known = True
        for cmd in split_commands(body):
            outcome = self.command(conn, cmd)
            if outcome is None:
                known = False
                result = self.error(port)
                break
            lines, final = outcome
            info.extend(lines)
            if final != "OK":
                result = final
                break
            if conn.data_mode:
                break
        self.record(port, conn, cmd=line, known=known)
        self.log(f"{port.short}#{conn.number} <- {line!r}{'' if known else ' (UNKNOWN)'} -> "
                 f"{info!r} {result}")
        text = "".join(f"\r\n{l}\r\n" for l in info) + f"\r\n{result}\r\n"
        return text

    def command(self, conn, cmd):
        """One command of a line: (info lines, final result), or None when unknown."""
        port, st, net = conn.port, conn.port.state, self.net
        u = cmd.upper()

        # Basic commands.
        m = re.fullmatch(r"E([01]?)", u)
        if m:
            st.echo = m.group(1) == "1"
            return [], "OK"
        if re.fullmatch(r"(V1?|Q0?|X[0-4]?|&C[01]?|&D[0-2]?|S0=0|Z0?|&F0?)", u):
            if u.startswith("Z") or u.startswith("&F"):
                st.echo, st.verbose_errors = True, 0
            return [], "OK"
        if u in ("I", "I0"):
            return [f"Manufacturer: {self.identity['manufacturer']}",
                    f"Model: {self.identity['model']}",
                    f"Revision: {self.identity['revision']}",
                    f"IMEI: {self.identity['imei']}",
                    "+GCAP: +CGSM"], "OK"
        if u in ("H", "H0"):
            return [], "OK"
        m = re.fullmatch(r"D\*99(?:\*\*\*(\d+))?#", u)
        if m:
            return self.dial(conn, int(m.group(1) or 1))

        # Extended commands.
        if u in ("+CGMI", "+GMI"):
            return [self.identity["manufacturer"]], "OK"
        if u in ("+CGMM", "+GMM"):
            return [self.identity["model"]], "OK"
        if u in ("+CGMR", "+GMR"):
            return [self.identity["revision"]], "OK"
        if u in ("+CGSN", "+GSN"):
            return [self.identity["imei"]], "OK"
        if u == "+GCAP":
            return ["+GCAP: +CGSM"], "OK"
        if u == "+WS46=?":
            return ["+WS46: (12,22,25,28,29,30,31)"], "OK"
        if u == "+WS46?":
            return ["+WS46: 25"], "OK"
        m = re.fullmatch(r"\+CMEE=([0-2])", u)
        if m:
            st.verbose_errors = int(m.group(1))
            return [], "OK"
        if u == "+CMEE?":
            return [f"+CMEE: {st.verbose_errors}"], "OK"
        if u == "+CSCS=?":
            return ['+CSCS: ("IRA","GSM","UCS2")'], "OK"
        if u == "+CSCS?":
            return ['+CSCS: "IRA"'], "OK"
        if re.fullmatch(r'\+CSCS="?(IRA|GSM|UCS2)"?', u):
            return [], "OK"

        # SIM.
        if u == "+CPIN?":
            sim = self.sim_state
            if sim == "missing":
                return [], self.error(port, 10)
            return ["+CPIN: " + ("READY" if sim == "ready" else "SIM PIN")], "OK"
        m = re.fullmatch(r'\+CPIN="?([0-9]{4,8})"?', u)
        if m:
            if self.net.sim == "missing":
                return [], self.error(port, 10)
            if self.sim_state == "ready":
                return [], self.error(port, 3)
            if m.group(1) != net.pin:
                return [], self.error(port, 16)
            self.sim_unlocked = True
            return [], "OK"
        if u in ("+CIMI", "+CCID", "+ICCID", "+CNUM", "+CLCK=?") or u.startswith("+CLCK=") \
                or u.startswith("+CRSM=176,"):
            return self.sim_command(port, u)

        # Functionality.
        if u == "+CFUN?":
            return [f"+CFUN: {self.cfun}"], "OK"
        if u == "+CFUN=?":
            return ["+CFUN: (0,1,4,15),(0-1)"], "OK"
        m = re.fullmatch(r"\+CFUN=(\d+)(?:,([01]))?", u)
        if m:
            fun, rst = int(m.group(1)), m.group(2)
            if fun == 15 or (fun == 1 and rst == "1"):
                # The OK goes out first; then the device drops off the bus.
                self.call_later(0.05, lambda: self.unplug(self.net.reboot_seconds, f"AT{cmd}"))
                return [], "OK"
            if fun not in (0, 1, 4):
                return [], self.error(port, 50)
            before = self.reg_snapshot()
            self.cfun = fun
            if fun != 1:
                for ctx in self.contexts.values():
                    ctx["active"] = False
            if self.reg_snapshot() != before:
                self.call_later(0.01, self.send_registration_urcs)
            return [], "OK"

        # Registration.
        m = re.fullmatch(r"\+(CREG|CGREG|CEREG)(=\?|\?|=([0-2]))", u)
        if m:
            name = m.group(1)
            if m.group(2) == "=?":
                return [f"+{name}: (0-2)"], "OK"
            if m.group(2) == "?":
                mode = st.reg_mode[name]
                return [f"+{name}: {mode},{self.reg_fields(mode)}"], "OK"
            st.reg_mode[name] = int(m.group(3))
            return [], "OK"
        if u == "+C5GREG?" or u.startswith("+C5GREG="):
            return None
        if u == "+COPS?":
            if not self.registered():
                return ["+COPS: 0"], "OK"
            oper = net.operator_code if st.cops_format == 2 else net.operator_name
            return [f'+COPS: 0,{st.cops_format},"{oper}",{ACT_CODE[net.act]}'], "OK"
        m = re.fullmatch(r"\+COPS=3,([02])", u)
        if m:
            st.cops_format = int(m.group(1))
            return [], "OK"
        if u in ("+COPS=0", "+COPS=2"):
            return [], "OK"
        if u == "+COPS=?":
            return [f'+COPS: (2,"{net.operator_name}","{net.operator_name}",'
                    f'"{net.operator_code}",{ACT_CODE[net.act]}),,(0-4),(0-2)'], "OK"

        # Signal.
        if u == "+CSQ":
            if self.registered():
                return [f"+CSQ: {net.csq_rssi},{net.csq_ber}"], "OK"
            return ["+CSQ: 99,99"], "OK"
        if u == "+CESQ=?":
            return ["+CESQ: (0-63,99),(0-7,99),(0-96,255),(0-49,255),(0-34,255),(0-97,255)"], "OK"
        if u == "+CESQ":
            levels = self.net.cesq_levels() if self.registered() else (99, 99, 255, 255, 255, 255)
            return ["+CESQ: " + ",".join(map(str, levels))], "OK"

        # Packet data.
        if u == "+CGDCONT=?":
            return ['+CGDCONT: (1-16),"IP",,,(0-2),(0-4)',
                    '+CGDCONT: (1-16),"IPV6",,,(0-2),(0-4)',
                    '+CGDCONT: (1-16),"IPV4V6",,,(0-2),(0-4)'], "OK"
        if u == "+CGDCONT?":
            return [f'+CGDCONT: {cid},"{c["type"]}","{c["apn"]}","0.0.0.0",0,0'
                    for cid, c in sorted(self.contexts.items())], "OK"
        m = re.fullmatch(r'\+CGDCONT=(\d+)(?:,"([A-Z0-9]*)"(?:,"([^"]*)")?.*)?', cmd, re.I)
        if m:
            cid = int(m.group(1))
            if not 1 <= cid <= 16:
                return [], self.error(port, 50)
            if m.group(2) is None:
                self.contexts.pop(cid, None)
            else:
                self.contexts[cid] = {"type": m.group(2).upper(), "apn": m.group(3) or "",
                                      "active": False}
            return [], "OK"
        if u == "+CGACT?":
            return [f"+CGACT: {cid},{int(c['active'])}" for cid, c in sorted(self.contexts.items())], "OK"
        if u == "+CGACT=?":
            return ["+CGACT: (0,1)"], "OK"
        m = re.fullmatch(r"\+CGACT=([01])(?:,(\d+))?", u)
        if m:
            on, cid = m.group(1) == "1", m.group(2)
            cids = [int(cid)] if cid else list(self.contexts)
            if on:
                for c in cids:
                    if c not in self.contexts:
                        return [], self.error(port, 50)
                if not self.registered():
                    return [], self.error(port, 30)
                if not net.data_ok:
                    return [], self.error(port, 133)
            for c in cids:
                if c in self.contexts:
                    self.contexts[c]["active"] = on
            return [], "OK"
        if u == "+CGEREP=?":
            return ["+CGEREP: (0-2),(0-1)"], "OK"
        if u == "+CGEREP?":
            return [f"+CGEREP: {st.cgerep},0"], "OK"
        m = re.fullmatch(r"\+CGEREP=([0-2])(?:,[01])?", u)
        if m:
            st.cgerep = int(m.group(1))
            return [], "OK"
        if u == "+CGATT?":
            return [f"+CGATT: {int(self.registered())}"], "OK"
        if u.startswith("+CGATT="):
            return [], "OK"
        m = re.fullmatch(r"\+CGPADDR(?:=(\d+))?", u)
        if m:
            cids = [int(m.group(1))] if m.group(1) else sorted(self.contexts)
            return [f'+CGPADDR: {c},"10.64.{c}.2"' for c in cids
                    if c in self.contexts and self.contexts[c]["active"]], "OK"
        return None

    def sim_command(self, port, u):
        if self.sim_state != "ready":
            return [], self.error(port, 10 if self.net.sim == "missing" else 11)
        if u == "+CIMI":
            return [self.identity["imsi"]], "OK"
        if u in ("+CCID", "+ICCID"):
            return [f"+CCID: {self.identity['iccid']}"], "OK"
        if u == "+CNUM":
            return [], "OK"
        if u == "+CLCK=?":
            return ['+CLCK: ("SC")'], "OK"
        m = re.fullmatch(r'\+CLCK="SC",2', u)
        if m:
            return [f"+CLCK: {int(self.net.sim == 'pin')}"], "OK"
        m = re.fullmatch(r"\+CRSM=176,(\d+),0,0,(\d+)", u)
        if m:
            # READ BINARY of an elementary file (TS 51.011): sw1 144 = success.
            data = self.sim_file(int(m.group(1)))
            if data is None:
                return ["+CRSM: 106,130"], "OK"       # file not found
            return [f'+CRSM: 144,0,"{data}"'], "OK"
        return None

    def sim_file(self, fid):
        """Hex contents of the SIM files ModemManager reads, or None."""
        if fid == 0x2FE2:                               # EF_ICCID: BCD, nibbles swapped
            digits = self.identity["iccid"] + "F" * (len(self.identity["iccid"]) % 2)
            return "".join(digits[i + 1] + digits[i] for i in range(0, len(digits), 2))
        if fid == 0x6FAD:                               # EF_AD: byte 4 = MNC length
            return "000000%02X" % (len(self.net.operator_code) - 3)
        if fid == 0x6F46:                               # EF_SPN: display byte, name, FF padding
            name = self.net.operator_name.encode("ascii")[:16].hex().upper()
            return "01" + name + "FF" * (16 - len(name) // 2)
        return None

    def dial(self, conn, cid):
        """ATD*99***cid#: CONNECT (the connection switches to data mode) when
        the context exists, the modem is registered and data is allowed."""
        if cid not in self.contexts or not self.registered() or not self.net.data_ok:
            return [], "NO CARRIER"
        self.contexts[cid]["active"] = True
        conn.data_mode = True
        conn.data_cid = cid
        return [], "CONNECT 150000000"

    # -- sockets -----------------------------------------------------------
    def send(self, conn, text):
        if conn.sock is None:
            return
        conn.outbuf += text.encode("latin-1", errors="replace")
        if len(conn.outbuf) > MAX_OUTPUT_BYTES:
            self.log(f"{conn.port.short}#{conn.number} not reading: closed")
            self.close_conn(conn)
            return
        self.flush(conn)

    def flush(self, conn):
        try:
            while conn.outbuf:
                n = conn.sock.send(conn.outbuf)
                conn.outbuf = conn.outbuf[n:]
        except BlockingIOError:
            pass
        except OSError:
            self.close_conn(conn)
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.outbuf else 0)
        self.sel.modify(conn.sock, events, ("conn", conn))

    def close_conn(self, conn):
        if conn.sock is None:
            return
        if conn.data_mode:
            # The tty closing drops DTR: the call ends (&D2 behaviour).
            ctx = self.contexts.get(conn.data_cid)
            if ctx:
                ctx["active"] = False
        self.sel.unregister(conn.sock)
        conn.sock.close()
        conn.sock = None
        if conn in conn.port.conns:
            conn.port.conns.remove(conn)
        self.log(f"{conn.port.short}#{conn.number} closed")

    def accept(self, port):
        try:
            sock, _ = port.listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        self.conn_counter += 1
        conn = Conn(self, port, sock, self.conn_counter)
        port.conns.append(conn)
        self.sel.register(sock, selectors.EVENT_READ, ("conn", conn))
        self.log(f"{port.short}#{conn.number} opened")

    def readable(self, conn):
        try:
            data = conn.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close_conn(conn)
            return
        if conn.data_mode:
            # PPP frames would go here; nothing answers them.
            return
        if conn.port.state.echo:
            self.send(conn, data.decode("latin-1"))
        conn.inbuf += data
        while conn.sock is not None and not conn.data_mode:
            m = re.search(rb"[\r\n]", conn.inbuf)
            if not m:
                if len(conn.inbuf) > MAX_LINE_BYTES:
                    self.log(f"{conn.port.short}#{conn.number} over-long line dropped")
                    conn.inbuf, conn.dropping = b"", True
                break
            raw, conn.inbuf = conn.inbuf[:m.start()], conn.inbuf[m.end():]
            if conn.dropping:
                conn.dropping = False
                continue
            line = raw.decode("latin-1").strip()
            if not line:
                continue
            reply = self.execute(conn, line)
            if reply is not None:
                self.send(conn, reply)

    def control_accept(self):
        try:
            sock, _ = self.control_listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(True)
        sock.settimeout(5)
        self.control_conns[sock] = b""
        self.sel.register(sock, selectors.EVENT_READ, ("control", sock))

    def control_readable(self, sock):
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.sel.unregister(sock)
            sock.close()
            del self.control_conns[sock]
            self.watchers.discard(sock)
            return
        buf = self.control_conns[sock] + data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                req = json.loads(line)
                if not isinstance(req, dict):
                    raise ControlError("a request is a JSON object")
                reply = self.control(req, sock)
            except (ValueError, ControlError) as exc:
                reply = {"ok": False, "error": str(exc)}
            try:
                sock.sendall((json.dumps(reply) + "\n").encode())
            except OSError:
                break
        if len(buf) > MAX_CONTROL_LINE_BYTES:
            buf = b""
        if sock in self.control_conns:
            self.control_conns[sock] = buf

    def run(self):
        try:
            os.unlink(self.control_path)
        except FileNotFoundError:
            pass
        ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ctl.bind(self.control_path)
        os.chmod(self.control_path, 0o600)
        ctl.listen(8)
        ctl.setblocking(False)
        self.control_listener = ctl
        self.sel.register(ctl, selectors.EVENT_READ, ("control-accept", None))
        self.listen()
        print("ready", flush=True)
        while True:
            timeout = None
            while self.timers and self.timers[0][2] is None:
                heapq.heappop(self.timers)
            if self.timers:
                timeout = max(0.0, self.timers[0][0] - time.monotonic())
            for key, events in self.sel.select(timeout):
                kind, obj = key.data
                if kind == "accept":
                    if obj.listener is not None:
                        self.accept(obj)
                elif kind == "conn":
                    if obj.sock is None:
                        continue
                    if events & selectors.EVENT_WRITE:
                        self.flush(obj)
                    if obj.sock is not None and events & selectors.EVENT_READ:
                        self.readable(obj)
                elif kind == "control-accept":
                    self.control_accept()
                elif kind == "control":
                    if obj in self.control_conns:
                        self.control_readable(obj)
            now = time.monotonic()
            while self.timers and self.timers[0][0] <= now:
                _, _, fn = heapq.heappop(self.timers)
                if fn is not None:
                    fn()


def split_commands(body):
    """Split what follows "AT" into single commands: extended commands (+X,
    $X, %X, ^X) run to the next ';' outside quotes; basic commands (E0, V1,
    &C1, S0=0, D...) follow each other with or without ';'."""
    out = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c in " ;":
            i += 1
            continue
        if c in "+$%^*#":
            j, quoted = i, False
            while j < n and (quoted or body[j] != ";"):
                if body[j] == '"':
                    quoted = not quoted
                j += 1
            out.append(body[i:j].strip())
            i = j
            continue
        if c.upper() == "D":               # dial runs to the end of the line
            out.append(body[i:].strip())
            break
        m = re.match(r"(&[A-Za-z]|[A-Za-z])(\d*)(=\d+|\?)?", body[i:])
        if m and m.group(0):
            out.append(m.group(0))
            i += len(m.group(0))
            continue
        out.append(body[i:])
        break
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", action="append", required=True,
                    help='an AT port to serve: "abstract:NAME" (abstract unix socket, as '
                         "ModemManager's SetProfile takes it) or a filesystem path")
    ap.add_argument("--control", required=True, help="path of the control socket")
    ap.add_argument("--log", help="append a log of everything to this file")
    ap.add_argument("--imei", default="861234567890128")
    ap.add_argument("--imsi", default="001010123456789")
    ap.add_argument("--iccid", default="89860012345678901234")
    ap.add_argument("--manufacturer", default="Fibocom")
    ap.add_argument("--model", default="L860-GL uplinkd emulator")
    ap.add_argument("--revision", default="atmodem-1")
    args = ap.parse_args(argv)
    for name in args.port:
        if not re.fullmatch(r"abstract:[A-Za-z0-9._:-]{1,90}|/[A-Za-z0-9._/-]{1,100}", name):
            ap.error(f"--port {name!r}: expected abstract:NAME or an absolute path "
                     f"(letters, digits, . _ : - only)")
    if not re.fullmatch(r"[0-9]{15}", args.imei):
        ap.error(f"--imei {args.imei!r}: expected 15 digits")
    identity = {k: getattr(args, k) for k in ("imei", "imsi", "iccid", "manufacturer", "model", "revision")}
    modem = Modem(args.port, args.control, args.log, identity)

    def stop(*_):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        modem.run()
    finally:
        modem.log("stopped")
        try:
            os.unlink(args.control)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
