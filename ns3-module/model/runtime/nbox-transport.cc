#include "nbox-transport.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NboxTransport);

TypeId
NboxTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxTransport").SetParent<Object>().SetGroupName("Nbox");
    return tid;
}

NboxCollectiveTimer*
NboxTransport::GetCollectiveTimer()
{
    return nullptr;
}

} // namespace ns3
