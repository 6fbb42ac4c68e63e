// Codex's app-server protocol (JSON-RPC 2.0 without the "jsonrpc" field) over one WebSocket.
// The token goes as a subprotocol, the one header a browser may set on a WebSocket handshake.

export const SUBPROTOCOL = "agent-app-server";

export function tokenProtocol(token) {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "bearer." + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export class Rpc {
  constructor(socket) {
    this.socket = socket;
    this.nextId = 1;
    this.pending = new Map(); // our request id -> {resolve, reject}
    this.listeners = new Map(); // notification method -> Set of callbacks
    this.onServerRequest = () => {};
    this.onClose = () => {};
    socket.addEventListener("message", (event) => this.received(event.data));
    socket.addEventListener("close", (event) => {
      for (const { reject } of this.pending.values()) reject(new Error("the connection closed"));
      this.pending.clear();
      this.onClose(event);
    });
  }

  // Resolves with an open Rpc, or rejects when the server refuses the handshake (a wrong token,
  // another site) or cannot be reached: a browser is not told which.
  static open(url, token) {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, [SUBPROTOCOL, tokenProtocol(token)]);
      const failed = () => reject(new Error("refused"));
      socket.addEventListener("error", failed, { once: true });
      socket.addEventListener("close", failed, { once: true });
      socket.addEventListener("open", () => {
        socket.removeEventListener("error", failed);
        socket.removeEventListener("close", failed);
        resolve(new Rpc(socket));
      }, { once: true });
    });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  notify(method, params) {
    this.send(params === undefined ? { method } : { method, params });
  }

  respond(id, result) {
    this.send({ id, result });
  }

  on(method, callback) {
    if (!this.listeners.has(method)) this.listeners.set(method, new Set());
    this.listeners.get(method).add(callback);
    return () => this.listeners.get(method).delete(callback);
  }

  send(message) {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  close() {
    this.socket.close();
  }

  received(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      this.onServerRequest(message);
    } else if (message.method !== undefined) {
      for (const callback of this.listeners.get(message.method) || []) callback(message.params || {});
      for (const callback of this.listeners.get("*") || []) callback(message.params || {}, message.method);
    } else if (this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message || "error"));
      else resolve(message.result);
    }
  }
}
