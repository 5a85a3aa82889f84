/** Tray menu: server status, open the panel, open the data folder, restart, quit. */
import { Menu, Tray, nativeImage } from 'electron';

export interface TrayActions {
  openPanel(): void;
  openDataFolder(): void;
  restartServer(): void;
  quit(): void;
}

const LABELS: Record<string, string> = {
  idle: 'Server: not started',
  starting: 'Server: starting…',
  running: 'Server: running',
  restarting: 'Server: restarting…',
  stopping: 'Server: stopping…',
  stopped: 'Server: stopped',
  failed: 'Server: failed — see the log',
};

export class GatehouseTray {
  private readonly tray: Tray;
  constructor(
    iconPath: string,
    private readonly actions: TrayActions,
  ) {
    this.tray = new Tray(nativeImage.createFromPath(iconPath).resize({ width: 16, height: 16 }));
    this.tray.setToolTip('Gatehouse');
    this.tray.on('click', () => actions.openPanel());
    this.update('starting');
  }

  update(status: string, url?: string): void {
    const menu = Menu.buildFromTemplate([
      { label: LABELS[status] ?? `Server: ${status}`, enabled: false },
      ...(url && status === 'running' ? [{ label: url, enabled: false }] : []),
      { type: 'separator' },
      { label: 'Open control panel', click: () => this.actions.openPanel(), enabled: status === 'running' },
      { label: 'Open data folder', click: () => this.actions.openDataFolder() },
      { label: 'Restart server', click: () => this.actions.restartServer() },
      { type: 'separator' },
      { label: 'Quit Gatehouse', click: () => this.actions.quit() },
    ]);
    this.tray.setContextMenu(menu);
    this.tray.setToolTip(`Gatehouse — ${LABELS[status] ?? status}`);
  }

  destroy(): void {
    this.tray.destroy();
  }
}
