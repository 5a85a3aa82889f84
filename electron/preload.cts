/**
 * Preload (sandboxed, so CommonJS): the only bridge between the panel and Electron. It exposes a
 * typed, read-only `window.gatehouse` with the server URL and admin token; nothing else.
 */
import electron = require('electron');

const { contextBridge, ipcRenderer } = electron;

interface GatehouseConfig {
  serverUrl: string;
  adminToken: string;
}

/** Mirrored by `GatehouseBridge` in renderer/src/session.ts. */
interface GatehouseBridge {
  /** Ask again after a 401: the token is read afresh on every call (it may have been rotated). */
  getConfig(): Promise<GatehouseConfig>;
}

const bridge: GatehouseBridge = {
  getConfig: () => ipcRenderer.invoke('gatehouse:get-config') as Promise<GatehouseConfig>,
};

contextBridge.exposeInMainWorld('gatehouse', bridge);
