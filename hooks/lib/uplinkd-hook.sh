# uplinkd-hook.sh: helpers shared by uplinkd's hook scripts. POSIX sh (dash,
# busybox ash); sourced, never run: it only defines functions and changes no shell
# option, so it works under `set -eu`.
#
# Installed as /usr/lib/uplinkd/hook-lib.sh; in the source tree it is
# hooks/lib/uplinkd-hook.sh (the agent runs only regular files of a hooks directory,
# so a lib/ directory beside the hooks is never run). A hook finds it at
# $UPLINKD_HOOK_LIB if set, else /usr/lib/uplinkd/hook-lib.sh if it exists, else
# lib/uplinkd-hook.sh beside the hook itself.
#
# Hooks an admin copied into /etc/uplinkd/hooks.d stay across upgrades while this
# file is replaced: keep every function's contract, add rather than change.
#
# Settings files: KEY=VALUE lines, read with sed, never executed (nothing in a value
# is expanded, run or evaluated). A line counts only if it starts with KEY= (no
# spaces around the =; leading blanks or a # make it a comment); VALUE is the rest
# of the line, verbatim (no quotes removed, no trailing blanks trimmed). When a key
# occurs several times the last line wins, and that line decides: if its value is
# empty or not of the type asked for, the default applies.
#
#   conf_value FILE KEY [TYPE [DEFAULT]]
#       Prints the value of the last KEY= line of FILE, or DEFAULT (empty unless
#       given) when FILE is missing or unreadable, has no such line, or the value is
#       empty or not of TYPE. Exit status 0, except 1 when the value is not of TYPE
#       (DEFAULT is printed all the same), so that a hook chooses:
#           METRIC=$(conf_value "$CONF" METRIC digits 10) || :      # keep the default
#           url=$(conf_value "$CONF" URL http-url) || exit 1         # refuse
#       KEY: letters, digits and _ (not starting with a digit); another KEY or an
#       unknown TYPE is a usage error (status 2, a message on stderr, nothing printed).
#
#   value_is TYPE VALUE
#       Whether VALUE is of TYPE (status 0 or 1; 2 and a message for an unknown
#       TYPE). Types:
#           any       not empty
#           digits    one or more of 0-9
#           yes-no    yes or no
#           http-url  starts with http:// or https://; no white space, no control
#                     characters
#           abs-path  starts with /
#           ifname    as valid_ifname
#           words     one or more words of a-z 0-9 _ - separated by spaces
#
#   valid_ifname NAME
#       Whether NAME is a usable interface name: not empty, only A-Z a-z 0-9 . _ @ -
#       (UPLINK_* variables come from the agent; hooks still check what they use
#       before it reaches a path or a command).
#
#   require_ifname NAME [WHAT]
#       Returns if NAME is valid (valid_ifname), else prints "refusing odd interface
#       name[ in WHAT]" on stderr and exits the hook with status 1 (call it from the
#       hook's own shell, not from a subshell). NAME itself is never printed.

valid_ifname() {
    case "$1" in
        "" | *[!A-Za-z0-9._@-]*) return 1 ;;
    esac
    return 0
}

require_ifname() {
    valid_ifname "$1" && return 0
    echo "refusing odd interface name${2:+ in $2}" >&2
    exit 1
}

value_is() {
    case "$1" in
        any) [ -n "$2" ] ;;
        digits)
            case "$2" in
                "" | *[!0-9]*) return 1 ;;
            esac ;;
        yes-no)
            case "$2" in
                yes | no) ;;
                *) return 1 ;;
            esac ;;
        http-url)
            case "$2" in
                *[[:space:]]* | *[[:cntrl:]]*) return 1 ;;
                http://* | https://*) ;;
                *) return 1 ;;
            esac ;;
        abs-path)
            case "$2" in
                /*) ;;
                *) return 1 ;;
            esac ;;
        ifname) valid_ifname "$2" ;;
        words)
            case "$2" in
                "" | *[!a-z0-9_\ -]*) return 1 ;;
            esac
            [ -n "$(printf '%s' "$2" | tr -d ' ')" ] ;;
        *)
            echo "value_is: unknown type '$1'" >&2
            return 2 ;;
    esac
}

conf_value() {
    # Globals prefixed _uh_ (POSIX sh has no `local`); they hold nothing a caller needs.
    _uh_file=$1
    _uh_key=$2
    _uh_type=${3:-any}
    _uh_default=${4:-}
    case "$_uh_key" in
        "" | [0-9]* | *[!A-Za-z0-9_]*)
            echo "conf_value: unusable key name '$_uh_key'" >&2
            return 2 ;;
    esac
    _uh_status=0
    value_is "$_uh_type" "" || _uh_status=$?     # 2 (and a message): no such type
    [ "$_uh_status" != 2 ] || return 2
    _uh_value=
    if [ -r "$_uh_file" ]; then
        _uh_value=$(sed -n "s/^$_uh_key=//p" "$_uh_file" | tail -n 1)
    fi
    if [ -z "$_uh_value" ]; then
        printf '%s\n' "$_uh_default"
        return 0
    fi
    _uh_status=0
    value_is "$_uh_type" "$_uh_value" || _uh_status=$?
    case "$_uh_status" in
        0) printf '%s\n' "$_uh_value" ;;
        1) printf '%s\n' "$_uh_default" ;;
    esac
    return "$_uh_status"
}
