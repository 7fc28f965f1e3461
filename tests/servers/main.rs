//! Netplay through the servers the tests start on loopback (nats-server,
//! matchbox_server, coturn) and the NAT lab in network namespaces.

mod broadcast;
mod ice_coturn;
mod ice_nat_lab;
mod lobby;
mod retroarch;
mod rooms;
mod rooms_rejoin;
mod rooms_rogues;
mod servers_present;
