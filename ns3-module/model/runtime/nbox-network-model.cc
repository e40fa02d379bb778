#include "nbox-network-model.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NboxNetworkModel);

TypeId
NboxNetworkModel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxNetworkModel").SetParent<Object>().SetGroupName("Nbox");
    return tid;
}

} // namespace ns3
