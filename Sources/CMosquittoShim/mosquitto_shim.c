#include "mosquitto_shim.h"

#include <stdlib.h>
#include <mqtt_protocol.h>

/* What the handle carries as its user data: the Swift owner and its callbacks. */
struct uplinkd_mqtt_user {
    void *user;
    uplinkd_mqtt_connect_callback on_connect;
    uplinkd_mqtt_disconnect_callback on_disconnect;
    uplinkd_mqtt_publish_callback on_publish;
    uplinkd_mqtt_message_callback on_message;
    uplinkd_mqtt_log_callback on_log;
};

static void connect_trampoline(struct mosquitto *mosq, void *data, int reason, int flags,
                               const mosquitto_property *props) {
    (void)mosq; (void)flags; (void)props;
    struct uplinkd_mqtt_user *u = data;
    u->on_connect(u->user, reason);
}

static void disconnect_trampoline(struct mosquitto *mosq, void *data, int rc, const mosquitto_property *props) {
    (void)mosq; (void)props;
    struct uplinkd_mqtt_user *u = data;
    u->on_disconnect(u->user, rc);
}

static void publish_trampoline(struct mosquitto *mosq, void *data, int mid, int reason,
                               const mosquitto_property *props) {
    (void)mosq; (void)props;
    struct uplinkd_mqtt_user *u = data;
    u->on_publish(u->user, mid, reason);
}

static void message_trampoline(struct mosquitto *mosq, void *data, const struct mosquitto_message *message,
                               const mosquitto_property *props) {
    (void)mosq; (void)props;
    struct uplinkd_mqtt_user *u = data;
    u->on_message(u->user, message->topic, message->payload, message->payloadlen);
}

static void log_trampoline(struct mosquitto *mosq, void *data, int level, const char *line) {
    (void)mosq;
    struct uplinkd_mqtt_user *u = data;
    u->on_log(u->user, level, line);
}

int uplinkd_mqtt_set_protocol(struct mosquitto *mosq, int protocol_version) {
    return mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION,
                                protocol_version == 5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
}

struct mosquitto *uplinkd_mqtt_new(const char *client_id, int protocol_version, void *user,
                                   uplinkd_mqtt_connect_callback on_connect,
                                   uplinkd_mqtt_disconnect_callback on_disconnect,
                                   uplinkd_mqtt_publish_callback on_publish,
                                   uplinkd_mqtt_message_callback on_message,
                                   uplinkd_mqtt_log_callback on_log) {
    struct uplinkd_mqtt_user *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->user = user;
    u->on_connect = on_connect;
    u->on_disconnect = on_disconnect;
    u->on_publish = on_publish;
    u->on_message = on_message;
    u->on_log = on_log;
    struct mosquitto *mosq = mosquitto_new(client_id, true, u);
    if (!mosq) {
        free(u);
        return NULL;
    }
    uplinkd_mqtt_set_protocol(mosq, protocol_version);
    mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_v5_callback_set(mosq, connect_trampoline);
    mosquitto_disconnect_v5_callback_set(mosq, disconnect_trampoline);
    mosquitto_publish_v5_callback_set(mosq, publish_trampoline);
    mosquitto_message_v5_callback_set(mosq, message_trampoline);
    mosquitto_log_callback_set(mosq, log_trampoline);
    return mosq;
}

void uplinkd_mqtt_destroy(struct mosquitto *mosq) {
    if (!mosq) return;
    void *u = mosquitto_userdata(mosq);
    mosquitto_destroy(mosq);
    free(u);
}

int uplinkd_mqtt_tls(struct mosquitto *mosq, const char *ca_file, const char *cert_file, const char *key_file) {
    int rc;
    if (ca_file) {
        rc = mosquitto_tls_set(mosq, ca_file, NULL, cert_file, key_file, NULL);
    } else {
        rc = mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1);
        if (rc == MOSQ_ERR_SUCCESS && cert_file) {
            rc = mosquitto_tls_set(mosq, NULL, "/etc/ssl/certs", cert_file, key_file, NULL);
        }
    }
    /* SSL_VERIFY_PEER (1): a broker whose certificate does not verify is refused. */
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_tls_opts_set(mosq, 1, NULL, NULL);
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_tls_insecure_set(mosq, false);
    return rc;
}

int uplinkd_mqtt_credentials(struct mosquitto *mosq, const char *user, const char *password) {
    return mosquitto_username_pw_set(mosq, user, password);
}

int uplinkd_mqtt_will(struct mosquitto *mosq, const char *topic, const void *payload, int length) {
    return mosquitto_will_set(mosq, topic, length, payload, 1, true);
}

int uplinkd_mqtt_connect(struct mosquitto *mosq, const char *host, int port, int keepalive_seconds) {
    return mosquitto_connect_bind_async(mosq, host, port, keepalive_seconds, NULL);
}

int uplinkd_mqtt_publish(struct mosquitto *mosq, int *message_id, const char *topic, const void *payload,
                         int length, int qos, bool retain) {
    return mosquitto_publish(mosq, message_id, topic, length, payload, qos, retain);
}

int uplinkd_mqtt_subscribe(struct mosquitto *mosq, const char *topic, int qos) {
    return mosquitto_subscribe(mosq, NULL, topic, qos);
}
