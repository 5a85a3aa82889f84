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
  getConfig(): Promise<GatehouseConfig>;
  openExternal(url: string): Promise<void>;
}

const bridge: GatehouseBridge = {
  getConfig: () => ipcRenderer.invoke('gatehouse:get-config') as Promise<GatehouseConfig>,
  openExternal: (url: string) => ipcRenderer.invoke('gatehouse:open-external', url) as Promise<void>,
};

contextBridge.exposeInMainWorld('gatehouse', bridge);
