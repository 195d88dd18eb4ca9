import ContactsLocal
import ContactsModel
import SyncKit

extension LocalServerKeeper {
    /// A keeper of `server` for `device`: it watches the device's push socket and reconnects every engine
    /// of the device once the server answers again.
    public convenience init(server: LocalServer, device: ContactsDevice, interval: Duration = .seconds(1)) {
        self.init(
            server: server, interval: interval, isPushConnected: { device.engine.isPushConnected },
            reconnect: { for engine in device.engines { engine.reconnect() } })
    }
}
