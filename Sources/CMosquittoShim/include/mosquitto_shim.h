/*
 * The libmosquitto shim of uplinkd: one call per concern that the Swift adapter
 * (UplinkLinux/MQTTConnection.swift) needs, with typed arguments only. The library's
 * own calls are not variadic, but several must come in a fixed order with options
 * that are macros (TLS with the peer verified, the protocol version), and its
 * callbacks are installed here in one place so their ownership is written once:
 * every callback receives the `user` pointer given to uplinkd_mqtt_new, which the
 * Swift side keeps alive for as long as the handle exists.
 */
#ifndef UPLINKD_MOSQUITTO_SHIM_H
#define UPLINKD_MOSQUITTO_SHIM_H

#include <stdbool.h>
#include <mosquitto.h>

/* Connection result: `reason` is the CONNACK code (MQTT 5 reason code, or the
 * 3.1.1 return code); `flags` the CONNACK flags. */
typedef void (*uplinkd_mqtt_connect_callback)(void *user, int reason);
/* The connection ended: `rc` is 0 after our own disconnect, else why. */
typedef void (*uplinkd_mqtt_disconnect_callback)(void *user, int rc);
/* A QoS > 0 message was acknowledged (QoS 0: handed to the socket); `reason` is
 * the PUBACK's MQTT 5 reason code (0x80 and up: the broker refused the message; 0
 * under 3.1.1). */
typedef void (*uplinkd_mqtt_publish_callback)(void *user, int message_id, int reason);
/* A message on a subscribed topic; `topic` and `payload` live for the call only. */
typedef void (*uplinkd_mqtt_message_callback)(void *user, const char *topic, const void *payload, int length);

/* A line of the library's own log (OpenSSL's reason for a failed handshake comes
 * only this way). `level` is a MOSQ_LOG_* bit. */
typedef void (*uplinkd_mqtt_log_callback)(void *user, int level, const char *line);

/* A client with a clean session, the protocol version given (5 or 4 for 3.1.1),
 * TCP_NODELAY on (events are small and latency matters more than packets), and
 * the callbacks installed. NULL when out of memory or `client_id` is invalid. */
struct mosquitto *uplinkd_mqtt_new(const char *client_id, int protocol_version, void *user,
                                   uplinkd_mqtt_connect_callback on_connect,
                                   uplinkd_mqtt_disconnect_callback on_disconnect,
                                   uplinkd_mqtt_publish_callback on_publish,
                                   uplinkd_mqtt_message_callback on_message,
                                   uplinkd_mqtt_log_callback on_log);

/* The MQTT version of the next connect: 5, or 4 for 3.1.1. */
int uplinkd_mqtt_set_protocol(struct mosquitto *mosq, int protocol_version);

/* Closes the connection (no DISCONNECT sent) and frees the handle. */
void uplinkd_mqtt_destroy(struct mosquitto *mosq);

/* TLS with the broker's certificate verified against `ca_file` (NULL: the
 * system's store) and its host name checked; `cert_file` and `key_file` (both or
 * neither) give a client certificate. */
int uplinkd_mqtt_tls(struct mosquitto *mosq, const char *ca_file, const char *cert_file, const char *key_file);

int uplinkd_mqtt_credentials(struct mosquitto *mosq, const char *user, const char *password);
/* The last will: retained, QoS 1. */
int uplinkd_mqtt_will(struct mosquitto *mosq, const char *topic, const void *payload, int length);
/* A non-blocking connect (the socket is the caller's to watch). */
int uplinkd_mqtt_connect(struct mosquitto *mosq, const char *host, int port, int keepalive_seconds);
int uplinkd_mqtt_publish(struct mosquitto *mosq, int *message_id, const char *topic, const void *payload,
                         int length, int qos, bool retain);
int uplinkd_mqtt_subscribe(struct mosquitto *mosq, const char *topic, int qos);

#endif
