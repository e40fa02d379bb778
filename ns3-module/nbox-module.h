/* Everything a user's ns-3 program needs from the nbox module. */
#ifndef NBOX_MODULE_H
#define NBOX_MODULE_H

#include "ns3/nbox-communicator.h"
#include "ns3/nbox-dcqcn.h"
#include "ns3/nbox-ecmp-routing.h"
#include "ns3/nbox-hpcc.h"
#include "ns3/nbox-int-tag.h"
#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-job-records.h"
#include "ns3/nbox-job.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-network.h"
#include "ns3/nbox-port-counter-source.h"
#include "ns3/nbox-rank-app.h"
#include "ns3/nbox-real-rank-gateway.h"
#include "ns3/nbox-roce-channel.h"
#include "ns3/nbox-roce-congestion-control.h"
#include "ns3/nbox-roce-go-back-n.h"
#include "ns3/nbox-roce-header.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-switch-mmu.h"
#include "ns3/nbox-tcp-small-queues.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/nbox-timely.h"
#include "ns3/nbox-transport.h"

#endif /* NBOX_MODULE_H */
